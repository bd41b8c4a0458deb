// A simulated sysfs tree with the kernel's shape, for tests and for the local simulated lab (`npm start`): PCI
// devices under devices/pci0000:00 reached through bus/pci/devices links, drivers under bus/pci/drivers with their
// bind/unbind files and device links, virtfnN/physfn links, class/net links, netdevsim devices. Give the rest of
// src/sriov `sysfsAt(root)` (or SRIOVCTL_SYSFS_ROOT=root to a front door) and it reads the tree like /sys.
//
// Plain files cannot react to writes, so the "drivers" live in sim-driver.ts: something (a test, the lab) calls
// `applyPending()` or runs `startSimDriver()`. Everything the simulation needs to remember is kept in the tree
// (under .sim/), so any process can open an existing tree and drive it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isUserspaceDriver } from './devices';
import { isAuxiliaryId, isBdf } from './paths';
import { makeDirs } from '../util/make-dirs';

const PCI_ROOT = 'devices/pci0000:00';
const SIM_DIR = '.sim';

export interface SimNetdevSpec {
  name: string;
  mac: string;
}

export interface SimPfSpec {
  bdf: string;
  /** sriov_totalvfs; null for a device that only has sriov_numvfs. Default 8. */
  totalVfs?: number | null;
  /** VFs present from the start. Default 0. */
  numVfs?: number;
  /** Default 'sim_pf'. */
  driver?: string;
  /** Driver the VFs are probed with when created. Default 'iavf'. */
  vfDriver?: string;
  /** The PF's netdev, or none. */
  netdev?: SimNetdevSpec | null;
  /** VF routing ID = PF routing ID + offset + index × stride (the kernel's First VF Offset / VF Stride). Default 16, 1. */
  vfOffset?: number;
  vfStride?: number;
  /** The driver enables at most this many VFs and reports that count (a firmware limit). */
  maxVfs?: number;
  /** VFs appear this long after the new count is noticed by applyPending()/the watcher. Default 0. */
  vfCreateDelayMs?: number;
  /** VF netdev names: '{pf}' is the PF's netdev name (or 'simvf'), '{index}' the VF index. Default '{pf}v{index}'. */
  vfNetdevTemplate?: string;
}

/** What the simulation remembers about a PF (stored in the tree). */
export type SimPfConfig = Required<Omit<SimPfSpec, 'netdev' | 'maxVfs'>> & { maxVfs: number | null; netdevName: string | null };

export interface SimNetdevsimSpec {
  /** The device is 'netdevsim<id>'. */
  id: number;
  numVfs?: number;
  ports?: SimNetdevSpec[];
}

export interface SimPciDeviceSpec {
  bdf: string;
  driver?: string | null;
  netdev?: SimNetdevSpec | null;
}

export interface SimAuxiliaryDeviceSpec {
  /** <module>.<device>.<id>, e.g. 'mlx5_core.sf.4' (a Scalable Function). */
  id: string;
  /** The PCI device it hangs off (its PF). */
  parent: string;
  netdev?: SimNetdevSpec | null;
}

export class SimSysfs {
  private constructor(readonly root: string) {}

  /** A fresh tree in `root` (created; must be empty or absent) or in a new temp directory. */
  static create(root?: string): SimSysfs {
    const dir = root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-sim-sysfs-'));
    const sim = new SimSysfs(path.resolve(dir));
    for (const d of ['bus/pci/devices', 'bus/pci/drivers', 'class/net', PCI_ROOT, 'devices/virtual/net', `${SIM_DIR}/pf`, `${SIM_DIR}/netdev`]) {
      makeDirs(sim.p(d));
    }
    sim.writeFile('bus/pci/drivers_probe', '');
    return sim;
  }

  /** An existing tree made by create() (e.g. by another process). */
  static open(root: string): SimSysfs {
    const sim = new SimSysfs(path.resolve(root));
    if (!fs.existsSync(sim.p(SIM_DIR))) throw new Error(`${root} is not a simulated sysfs tree (no ${SIM_DIR}/)`);
    return sim;
  }

  /** Remove the whole tree. */
  remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  /** Absolute path of a path relative to the root. */
  p(...rel: string[]): string {
    return path.join(this.root, ...rel);
  }

  // ---- drivers ---------------------------------------------------------------------------------------------------

  /** A PCI driver directory with its bind/unbind files (idempotent). */
  addDriver(name: string): void {
    const dir = `bus/pci/drivers/${name}`;
    if (fs.existsSync(this.p(dir, 'bind'))) return;
    makeDirs(this.p(dir));
    for (const f of ['bind', 'unbind', 'new_id', 'remove_id', 'uevent']) this.writeFile(`${dir}/${f}`, '');
  }

  /** Point `bdf`'s driver link at `driver` (or unbind with null), keeping the driver's device link in step. */
  setDriverLink(bdf: string, driver: string | null): void {
    const dev = this.pciDir(bdf);
    const current = this.readLinkName(`${dev}/driver`);
    if (current) {
      fs.rmSync(this.p(dev, 'driver'), { force: true });
      fs.rmSync(this.p('bus/pci/drivers', current, bdf), { force: true });
    }
    if (driver) {
      this.addDriver(driver);
      this.symlink(`../../../bus/pci/drivers/${driver}`, `${dev}/driver`);
      this.symlink(`../../../../${dev}`, `bus/pci/drivers/${driver}/${bdf}`);
    }
  }

  // ---- PCI devices -----------------------------------------------------------------------------------------------

  /** devices/pci0000:00/<bdf>, relative to the root. */
  pciDir(bdf: string): string {
    return `${PCI_ROOT}/${bdf}`;
  }

  hasPciDevice(bdf: string): boolean {
    return fs.existsSync(this.p(this.pciDir(bdf)));
  }

  /** A PCI device (no SR-IOV), optionally bound and with a netdev. */
  addPciDevice(spec: SimPciDeviceSpec): void {
    assertBdf(spec.bdf);
    const dev = this.pciDir(spec.bdf);
    makeDirs(this.p(dev));
    this.writeFile(`${dev}/driver_override`, '(null)\n');
    this.writeFile(`${dev}/vendor`, '0x8086\n');
    this.symlink('../../../bus/pci', `${dev}/subsystem`);
    this.symlink(`../../../${dev}`, `bus/pci/devices/${spec.bdf}`);
    this.addIommuGroup(spec.bdf);
    if (spec.driver) this.setDriverLink(spec.bdf, spec.driver);
    if (spec.netdev) this.addNetdev(spec.bdf, spec.netdev);
  }

  /**
   * Its own IOMMU group, as the lab's igb VFs have behind the emulated VT-d (a device in its own PCIe slot, and
   * each of its VFs): kernel/iommu_groups/<n>/devices/<bdf> and <device>/iommu_group, n one above the highest.
   */
  private addIommuGroup(bdf: string): void {
    const groups = this.list('kernel/iommu_groups').map(Number);
    const n = groups.length ? Math.max(...groups) + 1 : 0;
    this.symlink(`../../../../${this.pciDir(bdf)}`, `kernel/iommu_groups/${n}/devices/${bdf}`);
    this.symlink(`../../../kernel/iommu_groups/${n}`, `${this.pciDir(bdf)}/iommu_group`);
  }

  /** Remove a PCI device with its links and netdevs (and its IOMMU group, which held only it). */
  removePciDevice(bdf: string): void {
    const dev = this.pciDir(bdf);
    const group = this.readLinkName(`${dev}/iommu_group`);
    if (group) fs.rmSync(this.p('kernel/iommu_groups', group), { recursive: true, force: true });
    for (const n of this.netdevNames(dev)) this.removeNetdev(n);
    this.setDriverLink(bdf, null);
    fs.rmSync(this.p('bus/pci/devices', bdf), { force: true });
    fs.rmSync(this.p(dev), { recursive: true, force: true });
  }

  /**
   * A device on the auxiliary bus under PCI device `parent`, as a Scalable Function is: <parent>/<id>, with
   * bus/auxiliary/devices/<id> and its subsystem link, and optionally a netdev (<parent>/<id>/net/<name>).
   */
  addAuxiliaryDevice(spec: SimAuxiliaryDeviceSpec): void {
    if (!isAuxiliaryId(spec.id)) throw new TypeError(`invalid auxiliary device ID ${JSON.stringify(spec.id)}`);
    if (!this.hasPciDevice(spec.parent)) throw new TypeError(`no PCI device ${spec.parent} to hang ${spec.id} off`);
    const dev = `${this.pciDir(spec.parent)}/${spec.id}`;
    makeDirs(this.p(dev));
    this.symlink('../../../../bus/auxiliary', `${dev}/subsystem`);
    this.symlink(`../../../${dev}`, `bus/auxiliary/devices/${spec.id}`);
    if (spec.netdev) this.addNetdevAt(dev, spec.netdev);
  }

  /** An SR-IOV PF; its initial VFs are created at once. */
  addPf(spec: SimPfSpec): SimPfConfig {
    const config: SimPfConfig = {
      bdf: spec.bdf,
      totalVfs: spec.totalVfs === undefined ? 8 : spec.totalVfs,
      numVfs: spec.numVfs ?? 0,
      driver: spec.driver ?? 'sim_pf',
      vfDriver: spec.vfDriver ?? 'iavf',
      vfOffset: spec.vfOffset ?? 16,
      vfStride: spec.vfStride ?? 1,
      maxVfs: spec.maxVfs ?? null,
      vfCreateDelayMs: spec.vfCreateDelayMs ?? 0,
      vfNetdevTemplate: spec.vfNetdevTemplate ?? '{pf}v{index}',
      netdevName: spec.netdev?.name ?? null,
    };
    this.addPciDevice({ bdf: spec.bdf, driver: config.driver, netdev: spec.netdev ?? null });
    const dev = this.pciDir(spec.bdf);
    if (config.totalVfs !== null) this.writeFile(`${dev}/sriov_totalvfs`, `${config.totalVfs}\n`);
    this.writeFile(`${dev}/sriov_numvfs`, '0\n');
    this.writeFile(`${SIM_DIR}/pf/${spec.bdf}.json`, JSON.stringify(config, null, 2));
    this.addDriver(config.vfDriver);
    if (config.numVfs > 0) this.createVfs(config, config.numVfs);
    return config;
  }

  /** Every simulated PF's configuration. */
  pfConfigs(): SimPfConfig[] {
    return this.list(`${SIM_DIR}/pf`)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(fs.readFileSync(this.p(SIM_DIR, 'pf', f), 'utf8')) as SimPfConfig);
  }

  pfConfig(bdf: string): SimPfConfig {
    const file = this.p(SIM_DIR, 'pf', `${bdf}.json`);
    if (!fs.existsSync(file)) throw new Error(`${bdf} is not a simulated PF`);
    return JSON.parse(fs.readFileSync(file, 'utf8')) as SimPfConfig;
  }

  /** The address of VF `index` of a PF, from the PF's routing ID, offset and stride (as the kernel computes it). */
  vfAddress(pf: SimPfConfig, index: number): string {
    const m = /^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/.exec(pf.bdf)!;
    const rid = parseInt(m[2], 16) * 256 + parseInt(m[3], 16) * 8 + Number(m[4]) + pf.vfOffset + index * pf.vfStride;
    const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
    return `${m[1]}:${hex(rid >> 8, 2)}:${hex((rid >> 3) & 0x1f, 2)}.${rid & 7}`;
  }

  /** The VF addresses of a PF by index (its virtfnN links). */
  vfAddresses(pfBdf: string): string[] {
    const dev = this.pciDir(pfBdf);
    const vfs: string[] = [];
    for (const e of this.list(dev)) {
      const m = /^virtfn(\d+)$/.exec(e);
      if (m) vfs[Number(m[1])] = this.readLinkName(`${dev}/${e}`)!;
    }
    return vfs;
  }

  /** Create VFs 0..count-1 the way the kernel does: devices, physfn/virtfn links, probe with the VF driver. */
  createVfs(pf: SimPfConfig, count: number, request?: string): string[] {
    const created: string[] = [];
    const pfDev = this.pciDir(pf.bdf);
    for (let i = 0; i < count; i++) {
      const bdf = this.vfAddress(pf, i);
      this.addPciDevice({ bdf, driver: null });
      this.symlink(`../${pf.bdf}`, `${this.pciDir(bdf)}/physfn`);
      this.rememberNetdev(bdf, { name: this.vfNetdevName(pf, i), mac: simMac(bdf) });
      this.probe(bdf, pf.vfDriver);
      // published once probed: a writer of sriov_numvfs waits for the links, and the kernel's write returns only
      // after every VF was probed (here the write is a plain file write, over before the VFs exist)
      this.symlink(`../${bdf}`, `${pfDev}/virtfn${i}`);
      created.push(bdf);
    }
    this.settleNumVfs(pfDev, count, request);
    return created;
  }

  /** Remove every VF of a PF (links, devices, netdevs) and set its count to 0. */
  removeVfs(pf: SimPfConfig, request?: string): string[] {
    const pfDev = this.pciDir(pf.bdf);
    const removed: string[] = [];
    this.vfAddresses(pf.bdf).forEach((bdf, i) => {
      fs.rmSync(this.p(pfDev, `virtfn${i}`), { force: true });
      if (bdf) {
        this.removePciDevice(bdf);
        fs.rmSync(this.p(SIM_DIR, 'netdev', `${bdf}.json`), { force: true });
        removed.push(bdf);
      }
    });
    this.settleNumVfs(pfDev, 0, request);
    return removed;
  }

  /**
   * The count the simulated kernel settled on. A real sriov_numvfs is computed on read, never re-written; the
   * simulation must write it, so it does so only while the file still holds the request it acted on (`request`,
   * when driven by a write): a writer that already moved on — it saw the links change and wrote its next count —
   * keeps its value, for the next tick to act on.
   */
  private settleNumVfs(pfDev: string, count: number, request?: string): void {
    const file = `${pfDev}/sriov_numvfs`;
    const now = (this.read(file) ?? '').trim();
    if (now === String(count)) return;
    if (request !== undefined && now !== request) return;
    this.writeFile(file, `${count}\n`);
  }

  /** Bind `bdf` to `driver` as a probe would: driver link, and a netdev unless it is a userspace driver. */
  probe(bdf: string, driver: string): void {
    this.setDriverLink(bdf, driver);
    const remembered = this.rememberedNetdev(bdf);
    if (!isUserspaceDriver(driver) && remembered && !this.netdevNames(this.pciDir(bdf)).length) this.addNetdev(bdf, remembered);
  }

  /** Unbind `bdf`: its netdev goes away with the driver (remembered, so a later probe brings it back). */
  release(bdf: string): void {
    for (const name of this.netdevNames(this.pciDir(bdf))) this.removeNetdev(name);
    this.setDriverLink(bdf, null);
  }

  // ---- netdevsim -------------------------------------------------------------------------------------------------

  /** A netdevsim bus device: sriov_numvfs only, ports as netdevs, no VF devices. */
  addNetdevsim(spec: SimNetdevsimSpec): string {
    const name = `netdevsim${spec.id}`;
    const dev = `devices/${name}`;
    makeDirs(this.p(dev));
    makeDirs(this.p('bus/netdevsim/devices'));
    for (const f of ['new_device', 'del_device']) {
      if (!fs.existsSync(this.p('bus/netdevsim', f))) this.writeFile(`bus/netdevsim/${f}`, '');
    }
    this.symlink('../../bus/netdevsim', `${dev}/subsystem`);
    this.symlink(`../../../${dev}`, `bus/netdevsim/devices/${name}`);
    this.writeFile(`${dev}/sriov_numvfs`, `${spec.numVfs ?? 0}\n`);
    for (const port of spec.ports ?? []) this.addNetdevAt(dev, port);
    return name;
  }

  // ---- netdevs ---------------------------------------------------------------------------------------------------

  /** A netdev of PCI device `bdf` (or a virtual one with null): <device>/net/<name> and class/net/<name>. */
  addNetdev(bdf: string | null, netdev: SimNetdevSpec): void {
    if (bdf === null) {
      this.writeFile(`devices/virtual/net/${netdev.name}/address`, `${netdev.mac}\n`);
      this.symlink(`../../devices/virtual/net/${netdev.name}`, `class/net/${netdev.name}`);
      return;
    }
    this.addNetdevAt(this.pciDir(bdf), netdev);
    this.rememberNetdev(bdf, netdev);
  }

  private addNetdevAt(dev: string, netdev: SimNetdevSpec): void {
    const dir = `${dev}/net/${netdev.name}`;
    const deviceName = path.basename(dev);
    this.writeFile(`${dir}/address`, `${netdev.mac}\n`);
    this.symlink(`../../../${deviceName}`, `${dir}/device`);
    this.symlink(`../../${dir}`, `class/net/${netdev.name}`);
  }

  /** Remove netdev `name` wherever it is (as when it leaves sysfs's namespace or its driver is unbound). */
  removeNetdev(name: string): void {
    const link = this.p('class/net', name);
    let target: string | null = null;
    try {
      target = fs.realpathSync(link);
    } catch {
      // dangling or absent
    }
    fs.rmSync(link, { force: true });
    if (target && target.startsWith(this.root + path.sep)) fs.rmSync(target, { recursive: true, force: true });
  }

  /** Rename a netdev (the kernel renames the sysfs entries with it). */
  renameNetdev(from: string, to: string): void {
    const target = fs.realpathSync(this.p('class/net', from));
    const renamed = path.join(path.dirname(target), to);
    fs.renameSync(target, renamed);
    fs.rmSync(this.p('class/net', from));
    fs.symlinkSync(path.relative(this.p('class/net'), renamed), this.p('class/net', to));
    const bdf = path.basename(path.dirname(path.dirname(renamed)));
    const remembered = isBdf(bdf) ? this.rememberedNetdev(bdf) : null;
    if (remembered) this.rememberNetdev(bdf, { ...remembered, name: to });
  }

  private netdevNames(dev: string): string[] {
    return this.list(`${dev}/net`);
  }

  private rememberNetdev(bdf: string, netdev: SimNetdevSpec): void {
    this.writeFile(`${SIM_DIR}/netdev/${bdf}.json`, JSON.stringify(netdev));
  }

  private rememberedNetdev(bdf: string): SimNetdevSpec | null {
    try {
      return JSON.parse(fs.readFileSync(this.p(SIM_DIR, 'netdev', `${bdf}.json`), 'utf8')) as SimNetdevSpec;
    } catch {
      return null;
    }
  }

  private vfNetdevName(pf: SimPfConfig, index: number): string {
    const name = pf.vfNetdevTemplate.replace('{pf}', pf.netdevName ?? 'simvf').replace('{index}', String(index));
    return name.slice(0, 15);
  }

  // ---- file helpers ----------------------------------------------------------------------------------------------

  /** Text of a file relative to the root, or null. */
  read(rel: string): string | null {
    try {
      return fs.readFileSync(this.p(rel), 'utf8');
    } catch {
      return null;
    }
  }

  /** Atomic (temp + rename), so a concurrent reader never sees an empty file the kernel would not show. */
  writeFile(rel: string, text: string): void {
    const file = this.p(rel);
    makeDirs(path.dirname(file));
    const temp = `${file}.sim-${process.pid}`;
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, file);
  }

  list(rel: string): string[] {
    try {
      return fs.readdirSync(this.p(rel)).sort();
    } catch {
      return [];
    }
  }

  readLinkName(rel: string): string | null {
    try {
      return path.basename(fs.readlinkSync(this.p(rel)));
    } catch {
      return null;
    }
  }

  private symlink(target: string, rel: string): void {
    makeDirs(path.dirname(this.p(rel)));
    fs.rmSync(this.p(rel), { force: true });
    fs.symlinkSync(target, this.p(rel));
  }
}

/** A locally administered MAC derived from a PCI address (stable, unique per address). */
export function simMac(bdf: string): string {
  const m = /^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/.exec(bdf)!;
  const dom = parseInt(m[1], 16);
  const devfn = parseInt(m[3], 16) * 8 + Number(m[4]);
  return [0x02, dom >> 8, dom & 0xff, parseInt(m[2], 16), devfn, 0x01].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

function assertBdf(bdf: string): void {
  if (!isBdf(bdf)) throw new TypeError(`invalid PCI address ${JSON.stringify(bdf)}`);
}
