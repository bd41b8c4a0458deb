// Moving a PCI device (a VF) to another driver through driver_override, so the new driver takes it whatever its ID
// table says: unbind from the current driver, set driver_override, write the address to the new driver's `bind`,
// clear driver_override. Every write is bounded; every step is checked before the next.
import * as path from 'node:path';
import { InvalidArgument, SysError } from '../errors';
import { writeSysfs } from './bounded-write';
import { deviceDir, driverOf } from './devices';
import { assertSysfsName, isBdf, pciDriverDir, type Sysfs } from './paths';
import { assertPollOptions, pollUntil } from '../util/wait';
import { exists } from './sysfs-read';

export interface BindOptions {
  /** Bound for each write and each wait. Default 10 s. */
  timeoutMs?: number;
  /** Poll interval while waiting for the driver link to change. Default 20 ms. */
  pollMs?: number;
}

export interface BindResult {
  address: string;
  /** The driver before (null: none). */
  previous: string | null;
  driver: string;
  /** False when it was already bound to `driver` (nothing written). */
  changed: boolean;
}

/**
 * Bind PCI device `address` to `driver`. On failure after the unbind, it tries to put the device back on its
 * previous driver and says in the error whether that worked.
 */
export async function bindDriver(sys: Sysfs, address: string, driver: string, opts: BindOptions = {}): Promise<BindResult> {
  const op = 'sriov bind driver';
  assertSysfsName('PCI address', address);
  assertSysfsName('driver name', driver);
  if (!isBdf(address)) throw new InvalidArgument(`invalid PCI address ${JSON.stringify(address)} (expected e.g. 0000:03:02.0)`);
  const poll = { timeoutMs: opts.timeoutMs ?? 10_000, pollMs: opts.pollMs ?? 20 };
  assertPollOptions(poll);
  const dir = deviceDir(sys, address);
  if (!dir) throw new SysError(`no PCI device ${address}`, { code: 'NOT_FOUND', op });
  const previous = driverOf(sys, address);
  if (previous === driver) return { address, previous, driver, changed: false };
  if (!exists(path.join(pciDriverDir(sys, driver), 'bind'))) {
    throw new SysError(`driver ${driver} is not loaded (no ${pciDriverDir(sys, driver)}/bind); load its module first`, { code: 'NOT_FOUND', op });
  }
  const write = (file: string, value: string) => writeSysfs(file, value, { timeoutMs: poll.timeoutMs });
  const waitForDriver = async (want: string | null) => {
    if (!(await pollUntil(() => driverOf(sys, address) === want, poll))) {
      throw new SysError(`${address} is bound to ${driverOf(sys, address) ?? 'no driver'} after ${poll.timeoutMs} ms`, { code: 'ETIMEDOUT', op });
    }
  };
  const override = path.join(dir, 'driver_override');

  if (previous) {
    try {
      await write(path.join(pciDriverDir(sys, previous), 'unbind'), address);
      await waitForDriver(null);
    } catch (err) {
      throw wrap(err, `unbinding ${address} from ${previous}`, op);
    }
  }
  try {
    await write(override, driver);
    await write(path.join(pciDriverDir(sys, driver), 'bind'), address);
    await waitForDriver(driver);
  } catch (err) {
    const back = previous ? await rebind(sys, address, previous, override, poll.timeoutMs) : 'it is left without a driver';
    throw wrap(err, `binding ${address} to ${driver} (was ${previous ?? 'unbound'}; ${back})`, op);
  } finally {
    // an override left behind would pin the device to `driver` across later probes
    await write(override, '\n').catch(() => undefined);
  }
  return { address, previous, driver, changed: true };
}

/** Best effort: put the device back on `driver`; says what happened. */
async function rebind(sys: Sysfs, address: string, driver: string, override: string, timeoutMs: number): Promise<string> {
  try {
    await writeSysfs(override, driver, { timeoutMs });
    if (driverOf(sys, address) === null) await writeSysfs(path.join(pciDriverDir(sys, driver), 'bind'), address, { timeoutMs });
    const ok = await pollUntil(() => driverOf(sys, address) === driver, { timeoutMs, pollMs: 20 });
    return ok ? `put back on ${driver}` : `putting it back on ${driver} did not take effect`;
  } catch (err) {
    return `putting it back on ${driver} failed: ${(err as Error).message}`;
  }
}

function wrap(err: unknown, what: string, op: string): SysError {
  if (!(err instanceof SysError)) return wrap(new SysError(String(err), { code: 'EIO', op }), what, op);
  return new SysError(`${what}: ${err.message}`, { code: err.code, errno: err.errno, op });
}
