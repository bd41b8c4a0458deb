// Interface names in a namespace: whether one is taken (as a name or an altname — they share one space) and
// which fallback to use when a NIC's original name was taken while it was away.
import type { Rtnl } from '../net';
import { SysError } from '../errors';
import { runWaitsSync, type WaitingSteps } from '../util/wait';

const IFNAMSIZ_BYTES = 15;

/** True when `name` is a link's name or altname in the socket's namespace (the kernel looks both up). */
export function nameInUse(rtnl: Rtnl, name: string): boolean {
  return runWaitsSync(nameInUseSteps(rtnl, name));
}

/** nameInUse as steps (the lookup made off the thread where they run with runWaits). */
export function* nameInUseSteps(rtnl: Rtnl, name: string): WaitingSteps<boolean> {
  return (yield* rtnl.steps.findLink({ name })) !== null;
}

/** '<original cut short>r<n>': recognisable as the original, within IFNAMSIZ, free in this namespace. */
export function chooseFallbackName(rtnl: Rtnl, original: string): string {
  for (let n = 0; n < 100; n++) {
    const suffix = `r${n}`;
    const base = Buffer.from(original).subarray(0, IFNAMSIZ_BYTES - suffix.length).toString();
    const candidate = base + suffix;
    if (!nameInUse(rtnl, candidate)) return candidate;
  }
  throw new SysError(`no free fallback name for ${original}`, { code: 'EEXIST', op: 'choose fallback name' });
}
