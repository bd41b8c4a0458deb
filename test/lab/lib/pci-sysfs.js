// A fake PCI sysfs tree with the kernel's shape, for one SR-IOV PF and its VFs:
//   devices/pci0000:00/<bdf>/...            the device directories
//   bus/pci/devices/<bdf> -> ../../../devices/pci0000:00/<bdf>
//   bus/pci/drivers/<drv>/<bdf> -> ../../../../devices/pci0000:00/<bdf>, and <dev>/driver -> the driver dir
//   <dev>/subsystem -> ../../../bus/pci
//   PF: sriov_totalvfs, sriov_numvfs, virtfnN -> ../<vf-bdf>, net/<name>/{address, device -> ../../../<bdf>}
//   VF: physfn -> ../<pf-bdf>, net/<name>/{address, device}, driver_override
//   class/net/<name> -> ../../devices/pci0000:00/<bdf>/net/<name>
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const hex = (n, w) => n.toString(16).padStart(w, '0');

/** PCI address of function `fn` (0-based, 8 per device) on `bus`: 0000:BB:DD.F. */
function pciAddress(bus, fn) {
  return `0000:${hex(bus, 2)}:${hex(fn >> 3, 2)}.${fn & 7}`;
}

function write(file, content) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

function link(target, at) {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at);
}

function addDevice(root, { bdf, driver, netdev }) {
  const dir = path.join(root, 'devices/pci0000:00', bdf);
  fs.mkdirSync(dir, { recursive: true });
  link(`../../../devices/pci0000:00/${bdf}`, path.join(root, 'bus/pci/devices', bdf));
  link('../../../bus/pci', path.join(dir, 'subsystem'));
  if (driver) {
    link(`../../../../devices/pci0000:00/${bdf}`, path.join(root, 'bus/pci/drivers', driver, bdf));
    link(`../../bus/pci/drivers/${driver}`, path.join(dir, 'driver'));
  }
  if (netdev) {
    write(path.join(dir, 'net', netdev.name, 'address'), `${netdev.mac}\n`);
    link(`../../../${bdf}`, path.join(dir, 'net', netdev.name, 'device'));
    link(`../../devices/pci0000:00/${bdf}/net/${netdev.name}`, path.join(root, 'class/net', netdev.name));
  }
  return dir;
}

/** spec: { pf: { bdf, driver, netdev: {name, mac}, totalVfs }, vfs: [{ bdf, driver, netdev }] } */
function buildPciSysfs(root, { pf, vfs }) {
  const pfDir = addDevice(root, pf);
  write(path.join(pfDir, 'sriov_totalvfs'), `${pf.totalVfs}\n`);
  write(path.join(pfDir, 'sriov_numvfs'), `${vfs.length}\n`);
  vfs.forEach((vf, i) => {
    const vfDir = addDevice(root, vf);
    fs.symlinkSync(`../${vf.bdf}`, path.join(pfDir, `virtfn${i}`));
    fs.symlinkSync(`../${pf.bdf}`, path.join(vfDir, 'physfn'));
    write(path.join(vfDir, 'driver_override'), '(null)\n');
  });
}

module.exports = { buildPciSysfs, pciAddress };
