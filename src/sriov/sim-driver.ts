// The simulated drivers of a SimSysfs tree: they notice what was written to sriov_numvfs, bind and unbind and
// react with the kernel's rules. A real write would fail (EBUSY, ERANGE) where the kernel refuses; a plain file
// cannot, so a refused count is put back in the file — the caller's read-back sees that nothing changed.
import { SimSysfs, type SimPfConfig } from './sim-tree';

export interface SimHooks {
  /** After VFs were created (the lab can give them real stand-in links here). */
  vfsCreated?: (pf: SimPfConfig, vfs: string[]) => void;
  /** After VFs were removed. */
  vfsRemoved?: (pf: SimPfConfig, vfs: string[]) => void;
  /** A driver whose probe fails: return the reason to refuse binding `address` to `driver` (null: bind). */
  refuseBind?: (address: string, driver: string) => string | null;
}

export interface SimEvent {
  kind: 'numvfs' | 'numvfs-refused' | 'bind' | 'unbind' | 'bind-refused';
  address: string;
  detail: string;
}

export class SimDriver {
  /** When a PF's new count was first noticed (for vfCreateDelayMs). */
  private readonly noticed = new Map<string, { value: string; at: number }>();
  private timer: NodeJS.Timeout | null = null;
  /** What the drivers did, oldest first (tests read it; bounded). */
  readonly events: SimEvent[] = [];

  constructor(
    readonly sim: SimSysfs,
    readonly hooks: SimHooks = {},
  ) {}

  /** React to every pending write now (VF count changes honour vfCreateDelayMs unless `immediate`). */
  applyPending(opts: { immediate?: boolean } = {}): void {
    for (const pf of this.sim.pfConfigs()) this.applyNumVfs(pf.bdf, opts);
    this.applyBindings();
  }

  /** React to the value in a PF's sriov_numvfs. */
  applyNumVfs(bdf: string, opts: { immediate?: boolean } = {}): void {
    const pf = this.sim.pfConfig(bdf);
    const file = `${this.sim.pciDir(bdf)}/sriov_numvfs`;
    const text = (this.sim.read(file) ?? '').trim();
    // empty: a writer is between its truncate and its write (the kernel never sees that state)
    if (text === '') return;
    const current = this.sim.vfAddresses(bdf).filter(Boolean).length;
    const asked = /^\d+$/.test(text) ? Number(text) : NaN;
    if (asked === current) {
      this.noticed.delete(bdf);
      return;
    }
    const refuse = (why: string) => {
      // put the old count back, unless a newer request replaced the refused one meanwhile (see settleNumVfs)
      if ((this.sim.read(file) ?? '').trim() === text) this.sim.writeFile(file, `${current}\n`);
      this.noticed.delete(bdf);
      this.log('numvfs-refused', bdf, `${JSON.stringify(text)}: ${why}`);
    };
    if (Number.isNaN(asked)) return refuse('not a number (EINVAL)');
    if (pf.totalVfs !== null && asked > pf.totalVfs) return refuse(`above sriov_totalvfs ${pf.totalVfs} (ERANGE)`);
    if (current > 0 && asked > 0) return refuse(`${current} VFs enabled: write 0 first (EBUSY)`);
    if (!opts.immediate && pf.vfCreateDelayMs > 0) {
      const seen = this.noticed.get(bdf);
      if (!seen || seen.value !== text) {
        this.noticed.set(bdf, { value: text, at: Date.now() });
        return;
      }
      if (Date.now() - seen.at < pf.vfCreateDelayMs) return;
    }
    this.noticed.delete(bdf);
    if (asked === 0) {
      const removed = this.sim.removeVfs(pf, text);
      this.log('numvfs', bdf, `0 (removed ${removed.length})`);
      this.hooks.vfsRemoved?.(pf, removed);
    } else {
      const count = pf.maxVfs === null ? asked : Math.min(asked, pf.maxVfs);
      const created = this.sim.createVfs(pf, count, text);
      this.log('numvfs', bdf, `${count} (asked ${asked})`);
      this.hooks.vfsCreated?.(pf, created);
    }
  }

  /** React to addresses written to the drivers' unbind, then bind files (the kernel's rules for each). */
  applyBindings(): void {
    const drivers = this.sim.list('bus/pci/drivers');
    for (const driver of drivers) {
      const bdf = this.take(`bus/pci/drivers/${driver}/unbind`);
      if (!bdf) continue;
      if (this.sim.readLinkName(`${this.sim.pciDir(bdf)}/driver`) !== driver) {
        this.log('bind-refused', bdf, `unbind from ${driver}: not bound to it (ENODEV)`);
        continue;
      }
      this.sim.release(bdf);
      this.log('unbind', bdf, driver);
    }
    for (const driver of drivers) {
      const bdf = this.take(`bus/pci/drivers/${driver}/bind`);
      if (!bdf) continue;
      const dev = this.sim.pciDir(bdf);
      const override = (this.sim.read(`${dev}/driver_override`) ?? '').trim();
      const refusal = !this.sim.hasPciDevice(bdf)
        ? 'no such device (ENODEV)'
        : this.sim.readLinkName(`${dev}/driver`)
          ? 'already bound (EBUSY)'
          : override && override !== '(null)' && override !== driver
            ? `driver_override is ${override} (ENODEV)`
            : this.hooks.refuseBind?.(bdf, driver) ?? null;
      if (refusal) {
        this.log('bind-refused', bdf, `bind to ${driver}: ${refusal}`);
        continue;
      }
      this.sim.probe(bdf, driver);
      this.log('bind', bdf, driver);
    }
  }

  /** Poll the tree every `intervalMs` (timers are unref'd: the watcher never keeps a process alive). */
  start(intervalMs = 5): this {
    this.stop();
    this.timer = setInterval(() => {
      try {
        this.applyPending();
      } catch {
        // a tree being removed under the watcher
      }
    }, intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The value written to a bind/unbind file, consumed (the file is emptied). */
  private take(rel: string): string {
    const value = (this.sim.read(rel) ?? '').trim();
    if (value) this.sim.writeFile(rel, '');
    return value;
  }

  private log(kind: SimEvent['kind'], address: string, detail: string): void {
    this.events.push({ kind, address, detail });
    if (this.events.length > 1000) this.events.shift();
  }
}

/** Start simulated drivers on `sim`, polling every `intervalMs`. */
export function startSimDriver(sim: SimSysfs, opts: { intervalMs?: number; hooks?: SimHooks } = {}): SimDriver {
  return new SimDriver(sim, opts.hooks).start(opts.intervalMs);
}
