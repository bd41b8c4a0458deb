// A namespace move as a slow call of engine steps (util/wait.ts): the kernel holds RTNL through it for 10–30 ms (an
// RCU barrier), so the daemon makes it off its thread and serves other calls meanwhile; a one-shot process makes it
// in place. The same validated request either way (Rtnl.moveLink, Rtnl.startMoveLink).
import type { Netns, Rtnl } from '../net';
import type { SlowCall } from '../util/wait';

export function slowMove(rtnl: Rtnl, index: number, target: Netns, name: string): SlowCall {
  return {
    inPlace: () => rtnl.moveLink(index, target, { name }),
    offThread: () => rtnl.startMoveLink(index, target, { name }),
  };
}
