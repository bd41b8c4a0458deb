// The lab's reusable SR-IOV fixture: a REAL netdevsim PF with N VFs (real PF-side VF settings on a real
// driver), veth stand-ins for the VF netdevs (netdevsim's legacy-mode VFs have none; a veth can really be
// moved between namespaces), and a fake PCI-shaped sysfs tree that maps them (PF and VF addresses,
// sriov_totalvfs, sriov_numvfs, virtfnN, physfn, net/<name>, driver) for SRIOVCTL_SYSFS_ROOT.
// The tree is the project's own simulated sysfs (src/sriov/sim-tree.ts, the shape test/helpers/fake-sysfs.ts
// uses), so the lab and the host tests see the same layout.
//
//   const { createVfFixture } = require('../fixture');
//   const fx = await createVfFixture(ctx, { numVfs: 4 });     // removed by the harness after the scenario
//   fx.pf.name / fx.pf.index / fx.pf.id    the PF netdev (netdevsim), in the initial namespace
//   fx.pfBdf                                its (fake) PCI address
//   fx.vfs[i] = { vf, bdf, netdev, peer, mac }   netdev: the VF's stand-in (null beyond opts.netdevs)
//   fx.sim, fx.sysfsRoot, fx.env            the SimSysfs tree; env = { SRIOVCTL_SYSFS_ROOT }
//
// The tree is a snapshot of the VFs made at creation: change the real VF count through fx.pf (or src/sriov on
// the real netdevsim device under /sys), not through the tree.
'use strict';

const { ipBatch, ipJson } = require('./lib/shell');
const { NetdevsimPf } = require('./lib/netdevsim');
const { sriovSim } = require('./lib/project');

let fixtureCount = 0;

/**
 * ctx: the scenario context (name prefix, defer) — or null, then call fx.destroy() yourself.
 * opts: numVfs (default 4), netdevs (how many VFs get a veth stand-in; default all),
 *       pfDriver (default 'netdevsim'), vfDriver (default 'iavf').
 */
async function createVfFixture(ctx, opts = {}) {
  const numVfs = opts.numVfs ?? 4;
  const netdevs = Math.min(opts.netdevs ?? numVfs, numVfs);
  const prefix = (ctx?.prefix ?? 'lbfx') + (fixtureCount++).toString(36);
  if (Buffer.byteLength(`${prefix}r${Math.max(0, netdevs - 1)}`) > 15) throw new Error(`fixture prefix too long: ${prefix}`);
  const cleanup = [];
  const fx = {
    pf: null,
    pfBdf: null,
    vfs: [],
    sim: null,
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

    const { SimSysfs } = sriovSim();
    fx.sim = SimSysfs.create();
    cleanup.push(() => fx.sim.remove());
    fx.sysfsRoot = fx.sim.root;
    fx.env = { SRIOVCTL_SYSFS_ROOT: fx.sysfsRoot };
    // One PCI bus per netdevsim device keeps addresses unique across fixtures.
    fx.pfBdf = `0000:${(0x10 + (fx.pf.id % 0xe0)).toString(16)}:00.0`;
    fx.sim.addPf({
      bdf: fx.pfBdf,
      totalVfs: fx.pf.maxVfs(),
      numVfs,
      driver: opts.pfDriver ?? 'netdevsim',
      vfDriver: opts.vfDriver ?? 'iavf',
      netdev: { name: fx.pf.name, mac: ipJson('link', 'show', 'dev', fx.pf.name)[0].address },
      vfNetdevTemplate: `${prefix}v{index}`,
    });

    // The tree names each VF's netdev and MAC; make real links that match: `<prefix>v<i>` is the VF's netdev,
    // its veth peer `<prefix>r<i>` stays in the initial namespace.
    fx.vfs = fx.sim.vfAddresses(fx.pfBdf).map((bdf, i) => {
      const [netdev] = fx.sim.list(`${fx.sim.pciDir(bdf)}/net`);
      const mac = netdev ? fx.sim.read(`${fx.sim.pciDir(bdf)}/net/${netdev}/address`).trim() : null;
      if (netdev && i >= netdevs) fx.sim.removeNetdev(netdev);
      return i < netdevs && netdev ? { vf: i, bdf, netdev, peer: `${prefix}r${i}`, mac } : { vf: i, bdf, netdev: null, peer: null, mac: null };
    });
    const withNetdev = fx.vfs.filter((v) => v.netdev);
    cleanup.push(() => {
      // A stand-in moved away and not brought back is removed through its peer (deleting one end kills both).
      const present = new Set(ipJson('link', 'show').map((l) => l.ifname));
      const del = withNetdev.map((v) => (present.has(v.netdev) ? v.netdev : present.has(v.peer) ? v.peer : null)).filter(Boolean);
      ipBatch(del.map((n) => `link del ${n}`), { check: false });
    });
    ipBatch(withNetdev.map((v) => `link add ${v.netdev} address ${v.mac} type veth peer name ${v.peer}`));
    return fx;
  } catch (err) {
    try { fx.destroy(); } catch { /* the original failure matters more */ }
    throw err;
  }
}

module.exports = { createVfFixture, NetdevsimPf };
