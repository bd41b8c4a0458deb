// CNI_NETNS opened as a network namespace, or the spec's "invalid environment variable" error.
import { openNetns, ownNetnsId, sameNetns, type Netns } from '../net';
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
  if (sameNetns(pod.id, ownNetnsId())) {
    pod.close();
    throw new CniError(CNI_ERR.INVALID_NETNS, `CNI_NETNS ${path} is the plugin's own network namespace, not a pod's`, 'CNI_NETNS');
  }
  return pod;
}
