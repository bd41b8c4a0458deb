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

/** The sections of a capture keyed by item (their keys hold dots); the others are one item (link) or lists of them. */
const KEYED = ['addresses', 'routes', 'sysctls'];

/**
 * The differences by item: 'addresses 192.0.2.10/24: gone', 'addresses 192.0.2.11/24: noprefixroute: true →
 * undefined', 'sysctls net.ipv4.conf.eth0.rp_filter: "2" → "0"', 'rules[1]: gone', 'link: operstate: "UP" → "DOWN"'.
 */
function byItem(before, after, differences) {
  const items = new Map();
  for (const difference of differences) {
    const path = difference.slice(0, difference.indexOf(': '));
    const section = /^[^.[]+/.exec(path)[0];
    if (path === section) continue; // the marker of an empty list: its entries say what went
    const rest = path.slice(section.length);
    let item;
    let get;
    let change;
    if (KEYED.includes(section)) {
      const keys = [...Object.keys(before[section] ?? {}), ...Object.keys(after[section] ?? {})];
      const key = keys.filter((k) => rest === `.${k}` || rest.startsWith(`.${k}.`)).sort((a, b) => b.length - a.length)[0];
      item = `${section} ${key}`;
      get = (c) => c[section]?.[key];
      change = difference.slice(section.length + 1 + key.length);
    } else {
      const index = /^\[(\d+)\]/.exec(rest);
      item = index ? `${section}[${index[1]}]` : section;
      get = (c) => (index ? c[section]?.[Number(index[1])] : c[section]);
      change = difference.slice(item.length);
    }
    if (!items.has(item)) items.set(item, { fields: [], gone: get(after) === undefined, added: get(before) === undefined });
    items.get(item).fields.push(change.replace(/^[.]/, '').replace(/^: /, ''));
  }
  return [...items].map(([item, { fields, gone, added }]) => `${item}: ${gone ? 'gone' : added ? 'new' : fields.join(', ')}`);
}

/** Throws "<what>: N differences: <item: what changed>; …" (at most 12 items shown) unless the captures agree. */
function expectNoDifferences(before, after, what) {
  const d = diffCaptures(before, after);
  if (d.length === 0) return;
  const items = byItem(before, after, d);
  const more = items.length > 12 ? `; … ${items.length - 12} more` : '';
  throw new Error(`${what}: ${d.length} differences: ${items.slice(0, 12).join('; ')}${more}`);
}

module.exports = { captureNic, expectNoDifferences };
