// A fake sysfs for tests: a SimSysfs tree in a temp dir with SRIOVCTL_SYSFS_ROOT pointing at it, and its simulated
// drivers (not running unless asked: a test calls `driver.applyPending()` or `driver.start()`).
import { sysfsAt, type Sysfs } from '../../src/sriov';
import { SimDriver, SimSysfs, type SimHooks } from '../../src/sriov/sim';

export interface FakeSysfs {
  sim: SimSysfs;
  root: string;
  /** The tree, as the sysfs model's functions take it. */
  sys: Sysfs;
  driver: SimDriver;
  /** Stop the drivers, remove the tree, restore SRIOVCTL_SYSFS_ROOT. */
  remove(): void;
}

export function fakeSysfs(opts: { hooks?: SimHooks } = {}): FakeSysfs {
  const sim = SimSysfs.create();
  const driver = new SimDriver(sim, opts.hooks);
  const previous = process.env.SRIOVCTL_SYSFS_ROOT;
  process.env.SRIOVCTL_SYSFS_ROOT = sim.root;
  return {
    sim,
    root: sim.root,
    sys: sysfsAt(sim.root),
    driver,
    remove() {
      driver.stop();
      if (previous === undefined) delete process.env.SRIOVCTL_SYSFS_ROOT;
      else process.env.SRIOVCTL_SYSFS_ROOT = previous;
      sim.remove();
    },
  };
}
