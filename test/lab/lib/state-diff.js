// The host tier's state diff (test/shared/nic-state.js: the same capture, the same allow-list of kernel-owned
// fields) for a real NIC in the VM: captured once it has settled — IPv6 duplicate address detection done, and the
// carrier back (a real NIC takes seconds to get it after it comes up; igbvf 5–10 s) — and compared in one line.
'use strict';

const { readNic, settledAddresses, diffCaptures } = require('../../shared/nic-state');
const { ipJson, linkJson, poll } = require('./shell');

/**
 * The NIC `nic` in namespace `netns` (null: the initial one), once its addresses are no longer tentative and, with
 * `operstate`, its link is in that state. When that never comes it is captured as it is: the differences name why.
 */
async function captureNic(nic, { netns = null, operstate = null, timeoutMs = 30_000 } = {}) {
  const settled = () => (operstate && linkJson(nic, netns)?.operstate !== operstate ? null : settledAddresses(netns, nic));
  const addrs = (await poll(settled, { timeoutMs, intervalMs: 50 })) ?? addressesAsTheyAre(nic, netns);
  return readNic(netns, nic, addrs);
}

function addressesAsTheyAre(nic, netns) {
  return ipJson(...(netns ? ['-n', netns] : []), 'addr', 'show', 'dev', nic)[0]?.addr_info ?? [];
}

/** Throws "<what>: N differences: <path: before → after>; …" (at most 12 shown) unless the captures agree. */
function expectNoDifferences(before, after, what) {
  const d = diffCaptures(before, after);
  if (d.length === 0) return;
  const more = d.length > 12 ? `; … ${d.length - 12} more` : '';
  throw new Error(`${what}: ${d.length} differences: ${d.slice(0, 12).join('; ')}${more}`);
}

module.exports = { captureNic, expectNoDifferences };
