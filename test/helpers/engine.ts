// The engine as in-process tests call it: the session of the test's isolated roots (isolatedRoots), or one made
// from the environment the test set up for its child processes (SRIOVCTL_STATE_DIR / SRIOVCTL_SYSFS_ROOT).
import { loadConfig } from '../../src/config';
import { openSession, type LendSession } from '../../src/lend';

let current: LendSession | null = null;

/** The session in-process engine calls use until `useSession(null)`. */
export function useSession(s: LendSession | null): void {
  current?.close();
  current = s;
}

function withSession<T>(fn: (s: LendSession) => T): T {
  if (current) return fn(current);
  const s = openSession(loadConfig(process.env));
  try {
    return fn(s);
  } finally {
    s.close();
  }
}

export const lend: LendSession['lend'] = (req) => withSession((s) => s.lend(req));
export const giveBack: LendSession['giveBack'] = (key, opts) => withSession((s) => s.giveBack(key, opts));
export const recover: LendSession['recover'] = (opts) => withSession((s) => s.recover(opts));
export const findRecords: LendSession['findRecords'] = (filter) => withSession((s) => s.findRecords(filter));
export const whereIs: LendSession['whereIs'] = (record) => withSession((s) => s.whereIs(record));
export { GIVE_BACK_STEPS, LEND_STEPS } from '../../src/lend';
