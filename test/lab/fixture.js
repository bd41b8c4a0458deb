// The lab's reusable SR-IOV fixture: a REAL netdevsim PF with N VFs (real PF-side VF settings on a real
// driver), veth stand-ins for the VF netdevs (netdevsim's legacy-mode VFs have none; veth can really be
// moved between namespaces), and a fake PCI-shaped sysfs tree that maps them (PF/VF addresses,
// sriov_totalvfs, sriov_numvfs, virtfnN, physfn, net/<name>, driver), to point SRIOVCTL_SYSFS_ROOT at.
//
//   const { createVfFixture } = require('../fixture');
//   const fx = await createVfFixture(ctx, { numVfs: 4 });     // removed by the harness after the scenario
//   fx.pf.name / fx.pf.index        the PF netdev (netdevsim), in the initial namespace; fx.pfBdf its fake address
//   fx.vfs[i] = { vf, bdf, netdev, peer, mac }   netdev: the VF's stand-in name (null beyond `netdevs`)
//   fx.sysfsRoot, fx.env            { SRIOVCTL_SYSFS_ROOT: fx.sysfsRoot }
//
// The fake tree is a snapshot of the VFs made at creation (sriov_numvfs, virtfnN): change the real count through
// fx.pf (or src/sriov on the real netdevsim device under /sys), not through the fake tree.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ipBatch, ipJson } = require('./lib/shell');
const { NetdevsimPf } = require('./lib/netdevsim');
const { buildPciSysfs, pciAddress } = require('./lib/pci-sysfs');

let fixtureCount = 0;

/**
 * ctx: the scenario context (name prefix, defer) — or null, then call fx.destroy() yourself.
 * opts: numVfs (default 4), netdevs (how many VFs get a veth stand-in; default all),
 *       vfDriver (default 'iavf'), pfDriver (default 'netdevsim').
 */
async function createVfFixture(ctx, opts = {}) {
  const numVfs = opts.numVfs ?? 4;
  const netdevs = Math.min(opts.netdevs ?? numVfs, numVfs);
  const prefix = (ctx?.prefix ?? 'lbfx') + (fixtureCount++).toString(36);
  if (Buffer.byteLength(prefix) + 1 + String(Math.max(0, netdevs - 1)).length > 15) {
    throw new Error(`fixture prefix too long: ${prefix}`);
  }
  const cleanup = [];
  const fx = {
    pf: null,
    pfBdf: null,
    vfs: [],
    sysfsRoot: null,
    env: null,
    destroy() {
      const errors = [];
      for (const fn of cleanup.splice(0).reverse()) {
        try { fn(); } catch (err) { errors.push(err.message); }
      }
      if (errors.length) throw new Error(`fixture cleanup: ${errors.join('; ')}`);
    },
  };
  ctx?.defer(() => fx.destroy());
  try {
    fx.pf = await NetdevsimPf.create({ name: `${prefix}pf`, numVfs });
    cleanup.push(() => fx.pf.destroy());

    // VF netdev stand-ins: `<prefix>v<i>` is the VF's netdev, its peer `<prefix>r<i>` stays behind.
    const vfNames = [];
    const lines = [];
    for (let i = 0; i < netdevs; i++) {
      vfNames.push(`${prefix}v${i}`);
      lines.push(`link add ${prefix}v${i} type veth peer name ${prefix}r${i}`);
    }
    cleanup.push(() => {
      // A stand-in that was moved away and not brought back is found by its peer: deleting the peer kills both.
      const left = new Set(ipJson('link', 'show').map((l) => l.ifname));
      ipBatch(vfNames.map((n, i) => (left.has(n) ? `link del ${n}` : left.has(`${prefix}r${i}`) ? `link del ${prefix}r${i}` : null))
        .filter(Boolean), { check: false });
    });
    ipBatch(lines);
    const byName = new Map(ipJson('link', 'show').map((l) => [l.ifname, l]));

    const bus = 0x10 + (fx.pf.id % 0xe0);
    const pfBdf = pciAddress(bus, 0);
    fx.pfBdf = pfBdf;
    fx.vfs = Array.from({ length: numVfs }, (_, i) => ({
      vf: i,
      // Routing-ID offset 1, stride 1: VF i is function i + 1 after the PF's.
      bdf: pciAddress(bus, i + 1),
      netdev: i < netdevs ? vfNames[i] : null,
      peer: i < netdevs ? `${prefix}r${i}` : null,
      mac: i < netdevs ? byName.get(vfNames[i]).address : null,
    }));

    fx.sysfsRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-lab-sysfs-'));
    cleanup.push(() => fs.rmSync(fx.sysfsRoot, { recursive: true, force: true }));
    fx.env = { SRIOVCTL_SYSFS_ROOT: fx.sysfsRoot };
    buildPciSysfs(fx.sysfsRoot, {
      pf: {
        bdf: pfBdf,
        driver: opts.pfDriver ?? 'netdevsim',
        netdev: { name: fx.pf.name, mac: byName.get(fx.pf.name).address },
        totalVfs: fx.pf.maxVfs(),
      },
      vfs: fx.vfs.map((v) => ({
        bdf: v.bdf,
        driver: opts.vfDriver ?? 'iavf',
        netdev: v.netdev ? { name: v.netdev, mac: v.mac } : null,
      })),
    });
    return fx;
  } catch (err) {
    try { fx.destroy(); } catch { /* the original failure matters more */ }
    throw err;
  }
}

module.exports = { createVfFixture, NetdevsimPf };
