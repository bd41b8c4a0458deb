// Everything the kernel shows of a NIC, captured with the kernel's own tools before and after a round trip, and every
// difference outside the kernel-owned fields named: the capture and the allow-list are test/shared/nic-state.js,
// which the kernel lab reads too.
import { onlyNic, readNic, settledAddresses, type NicCapture } from '../shared/nic-state.js';
import { waitFor } from './kernel';

export { diffCaptures, type NicCapture } from '../shared/nic-state.js';

/**
 * The NIC `nic` in named namespace `netns` (null: ours), once IPv6 duplicate address detection has settled. `shared`:
 * the namespace is shared with others (the initial one): of its rules and nexthop objects, only those of the NIC.
 */
export async function captureNic(netns: string | null, nic: string, opts: { shared?: boolean } = {}): Promise<NicCapture> {
  const addrs = await waitFor(() => settledAddresses(netns, nic));
  const all = readNic(netns, nic, addrs);
  return opts.shared ? onlyNic(all, nic) : all;
}
