// The VM's real SR-IOV NICs: QEMU's emulated Intel 82576 (`-device igb`, run-in-vm.sh plugs in SRLAB_IGB of
// them), driven by the kernel's igb (PF) and igbvf (VF) drivers, behind an emulated VT-d IOMMU. Read and set up
// through the real /sys and iproute2 — never with the code under test — so they are the independent witness.
//
//   const pfs = igbPfs();                     // [{ bdf, name }] in PCI order, as the VM booted them
//   const pf = await takeIgbPf(ctx, 0);       // the first one, checked idle; put back as it was after the scenario
//   pf.numVfs() / pf.vfs() / pf.setNumVfs(n) / pf.looks()
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { ip, looks, poll } = require('./shell');

const PCI = '/sys/bus/pci/devices';
const INTEL = '0x8086';
const I82576 = '0x10c9';
const I82576_VF = '0x10ca';

const read = (file) => fs.readFileSync(file, 'utf8').trim();
const readOr = (file, dflt) => {
  try {
    return read(file);
  } catch {
    return dflt;
  }
};
const linkName = (file) => {
  try {
    return path.basename(fs.readlinkSync(file));
  } catch {
    return null;
  }
};

/** Every 82576 PF on the PCI bus (bound or not), in address order. */
function igbPfAddresses() {
  if (!fs.existsSync(PCI)) return [];
  return fs.readdirSync(PCI).sort().filter((bdf) => readOr(`${PCI}/${bdf}/vendor`, '') === INTEL && readOr(`${PCI}/${bdf}/device`, '') === I82576);
}

/** The PF's netdev name as this (the initial) namespace sees it, or null (elsewhere, or no driver). */
function netdevOf(bdf) {
  const dir = `${PCI}/${bdf}/net`;
  return fs.existsSync(dir) ? fs.readdirSync(dir)[0] ?? null : null;
}

/** Load the drivers once for the run: there is no udev in the VM to do it on the devices' uevents. */
function loadIgbDrivers(sh) {
  if (igbPfAddresses().length === 0) return false;
  // igbvf and vfio-pci first: VFs created later are probed by a driver that is already registered
  sh('modprobe', ['-a', 'igbvf', 'vfio-pci', 'igb']);
  return true;
}

/** What the harness compares before and after each scenario: every igb PF's VF count, driver and netdev here. */
function igbState() {
  return igbPfAddresses().map((bdf) => `${bdf}:${linkName(`${PCI}/${bdf}/driver`)}:${netdevOf(bdf)}:${readOr(`${PCI}/${bdf}/sriov_numvfs`, '?')}`);
}

/** Put leaked VF counts back to 0 (the harness, after a leaking scenario). */
function resetIgbVfs() {
  for (const bdf of igbPfAddresses()) {
    try {
      if (readOr(`${PCI}/${bdf}/sriov_numvfs`, '0') !== '0') fs.writeFileSync(`${PCI}/${bdf}/sriov_numvfs`, '0');
    } catch {
      // best effort: the next scenario will say what is wrong
    }
  }
}

class IgbPf {
  constructor(bdf) {
    this.bdf = bdf;
    this.dir = `${PCI}/${bdf}`;
    this.name = netdevOf(bdf);
    this.index = this.name ? Number(read(`/sys/class/net/${this.name}/ifindex`)) : null;
  }

  /** Its netdev's name in the initial namespace (sysfs lists only that one), or null while it is elsewhere. */
  netdevHere() { return netdevOf(this.bdf); }

  numVfs() { return Number(read(`${this.dir}/sriov_numvfs`)); }
  totalVfs() { return Number(read(`${this.dir}/sriov_totalvfs`)); }

  /** Its VFs from the virtfnN links: { index, bdf, driver, netdev (here, or null), group (IOMMU group or null) }. */
  vfs() {
    const out = [];
    for (const e of fs.readdirSync(this.dir)) {
      const m = /^virtfn(\d+)$/.exec(e);
      if (!m) continue;
      const bdf = linkName(`${this.dir}/${e}`);
      const vdir = `${PCI}/${bdf}`;
      out.push({
        index: Number(m[1]),
        bdf,
        isVf: readOr(`${vdir}/device`, '') === I82576_VF,
        driver: linkName(`${vdir}/driver`),
        netdev: fs.existsSync(`${vdir}/net`) ? fs.readdirSync(`${vdir}/net`)[0] ?? null : null,
        group: linkName(`${vdir}/iommu_group`),
      });
    }
    return out.sort((a, b) => a.index - b.index);
  }

  /** The kernel's rule: a non-zero count changes only through 0. Plain sysfs writes (the witness's way). */
  setNumVfs(n) {
    if (n !== 0 && this.numVfs() !== 0) fs.writeFileSync(`${this.dir}/sriov_numvfs`, '0');
    fs.writeFileSync(`${this.dir}/sriov_numvfs`, String(n));
  }

  /** name, MAC, MTU, admin state (iproute2), in `netns` or here. */
  looks(netns) { return looks(this.name, netns); }
}

/**
 * igb PF number `n` for this scenario: checked to be idle (here, no VFs), given a non-default MTU and admin up so
 * that a restore which forgets either shows; after the scenario its VFs are removed, and it is brought back here
 * (wherever a failure left it), renamed, and set back to exactly how the VM booted it.
 */
async function takeIgbPf(ctx, n = 0) {
  const addresses = igbPfAddresses();
  if (addresses.length <= n) throw new Error(`the VM has ${addresses.length} igb NICs; this scenario needs ${n + 1} (SRLAB_IGB)`);
  const pf = new IgbPf(addresses[n]);
  if (!pf.name) throw new Error(`igb PF ${pf.bdf} has no netdev in the initial namespace (driver ${linkName(`${pf.dir}/driver`)})`);
  if (pf.numVfs() !== 0) throw new Error(`igb PF ${pf.bdf} (${pf.name}) starts with ${pf.numVfs()} VFs`);
  const booted = pf.looks();
  ctx.defer(async () => {
    // the PF may be in a namespace a failure left behind: that namespace is deleted by the scenario's own
    // cleanup (or the harness); the kernel then returns the PF here, asynchronously
    const back = await poll(() => fs.existsSync(`/sys/class/net`) && netdevOf(pf.bdf), { timeoutMs: 10_000 });
    if (!back) throw new Error(`igb PF ${pf.bdf} did not come back to the initial namespace`);
    if (pf.numVfs() !== 0) fs.writeFileSync(`${pf.dir}/sriov_numvfs`, '0');
    if (back !== booted.name) ip('link', 'set', 'dev', back, 'down', 'name', booted.name);
    ip('link', 'set', 'dev', booted.name, 'address', booted.mac, 'mtu', String(booted.mtu), booted.up ? 'up' : 'down');
  });
  ip('link', 'set', 'dev', pf.name, 'mtu', '1400', 'up');
  return pf;
}

/** Wait until every VF of `pf` has a netdev in the initial namespace (igbvf probes synchronously in the write). */
async function waitForVfNetdevs(pf, count, timeoutMs = 20_000) {
  return poll(() => {
    const vfs = pf.vfs();
    return vfs.length === count && vfs.every((v) => v.netdev) ? vfs : null;
  }, { timeoutMs, intervalMs: 5 });
}

/** As a DPDK node prepares a VF: igbvf lets go of it and vfio-pci takes it, through driver_override. */
function bindToVfioPci(bdf) {
  fs.writeFileSync('/sys/bus/pci/drivers/igbvf/unbind', bdf);
  fs.writeFileSync(`${PCI}/${bdf}/driver_override`, 'vfio-pci');
  fs.writeFileSync('/sys/bus/pci/drivers/vfio-pci/bind', bdf);
  fs.writeFileSync(`${PCI}/${bdf}/driver_override`, '\n');
}

module.exports = { igbPfAddresses, loadIgbDrivers, igbState, resetIgbVfs, takeIgbPf, waitForVfNetdevs, bindToVfioPci, IgbPf };
