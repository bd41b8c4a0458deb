// A netdevsim PF: the kernel's simulated NIC, with real PF-side SR-IOV (sriov_numvfs, and every VF setter
// through ndo_set_vf_* / ndo_get_vf_config). Created and removed through /sys/bus/netdevsim, set up with
// iproute2 and plain sysfs writes — never with the code under test.
'use strict';

const fs = require('node:fs');
const { ip, ipJson, poll } = require('./shell');

const BUS = '/sys/bus/netdevsim';
const DEBUGFS = '/sys/kernel/debug/netdevsim';

let nextId = 10;
function freeId() {
  while (fs.existsSync(`${BUS}/devices/netdevsim${nextId}`)) nextId++;
  return nextId++;
}

class NetdevsimPf {
  /**
   * A new netdevsim device with one port (the PF netdev), renamed to `name` (netdevsim calls it ethN).
   * Options: maxVfs (raised through debugfs when > 4, the driver's default), numVfs.
   */
  static async create({ name, maxVfs, numVfs = 0 } = {}) {
    const id = freeId();
    fs.writeFileSync(`${BUS}/new_device`, `${id} 1`);
    const pf = new NetdevsimPf(id);
    try {
      // The port's netdev is registered by the probe; do not assume it is there the moment the write returns.
      const netDir = `${pf.devDir}/net`;
      const kernelName = await poll(() => (fs.existsSync(netDir) ? fs.readdirSync(netDir)[0] : null), { timeoutMs: 5000 });
      if (!kernelName) throw new Error(`netdevsim${id}: no PF netdev appeared`);
      if (name && name !== kernelName) ip('link', 'set', 'dev', kernelName, 'name', name);
      pf.name = name || kernelName;
      pf.index = ipJson('link', 'show', 'dev', pf.name)[0].ifindex;
      const wanted = Math.max(maxVfs ?? 0, numVfs);
      if (wanted > pf.maxVfs()) pf.setMaxVfs(wanted);
      if (numVfs) pf.setNumVfs(numVfs);
      return pf;
    } catch (err) {
      pf.destroy();
      throw err;
    }
  }

  constructor(id) {
    this.id = id;
    this.devDir = `${BUS}/devices/netdevsim${id}`;
    this.name = null;
    this.index = null;
  }

  /** The real sysfs file (not behind /sys/class/net, which only shows the reader's namespace). */
  get numVfsPath() { return `${this.devDir}/sriov_numvfs`; }
  get maxVfsPath() { return `${DEBUGFS}/netdevsim${this.id}/max_vfs`; }

  numVfs() { return Number(fs.readFileSync(this.numVfsPath, 'utf8').trim()); }
  maxVfs() { return Number(fs.readFileSync(this.maxVfsPath, 'utf8').trim()); }

  /** netdevsim refuses a new maximum while VFs exist. */
  setMaxVfs(n) { fs.writeFileSync(this.maxVfsPath, String(n)); }

  /** The kernel's rule, as on real drivers: a non-zero count changes only through 0. */
  setNumVfs(n) {
    if (n !== 0 && this.numVfs() !== 0) fs.writeFileSync(this.numVfsPath, '0');
    fs.writeFileSync(this.numVfsPath, String(n));
  }

  /** Remove the device wherever its netdev is (any namespace). Idempotent. */
  destroy() {
    if (!fs.existsSync(this.devDir)) return;
    fs.writeFileSync(`${BUS}/del_device`, String(this.id));
  }
}

module.exports = { NetdevsimPf };
