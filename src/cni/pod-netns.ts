// CNI_NETNS opened as a network namespace, or the spec's "invalid environment variable" error.
import { connect, openNetns, type Netns, type Rtnl } from '../net';
import { invalidEnv } from './errors';
import { describeError } from './sys-errors';

export function openPodNetns(path: string): Netns {
  try {
    return openNetns(path);
  } catch (err) {
    throw invalidEnv('CNI_NETNS', `${path} is not a network namespace: ${describeError(err)}`);
  }
}

/** Run `fn` with a netlink socket in `ns` (null: ours), closing it afterwards. */
export function withRtnl<T>(ns: Netns | null, fn: (rtnl: Rtnl) => T): T {
  const rtnl = connect(ns);
  try {
    return fn(rtnl);
  } finally {
    rtnl.close();
  }
}
