// CNI_NETNS opened as a network namespace, or the spec's "invalid environment variable" error.
import { openNetns, type Netns } from '../net';
import { invalidEnv } from './errors';
import { describeError } from './sys-errors';

export function openPodNetns(path: string): Netns {
  try {
    return openNetns(path);
  } catch (err) {
    throw invalidEnv('CNI_NETNS', `${path} is not a network namespace: ${describeError(err)}`);
  }
}
