// CNI_NETNS opened as a network namespace, or the spec's "invalid environment variable" error.
import { connect, currentNetns, openNetns, sameNetns, type Netns, type Rtnl } from '../net';
import { CNI_ERR, CniError, invalidEnv } from './errors';
import { describeError } from './sys-errors';

/** ADD and CHECK: the pod's namespace, which must not be ours (libcni's skel refuses that with code 8). */
export function openPodNetns(path: string): Netns {
  let pod: Netns;
  try {
    pod = openNetns(path);
  } catch (err) {
    throw invalidEnv('CNI_NETNS', `${path} is not a network namespace: ${describeError(err)}`);
  }
  const ours = currentNetns();
  const same = sameNetns(pod.id, ours.id);
  ours.close();
  if (same) {
    pod.close();
    throw new CniError(CNI_ERR.INVALID_NETNS, `CNI_NETNS ${path} is the plugin's own network namespace, not a pod's`, 'CNI_NETNS');
  }
  return pod;
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
