// Everything the kernel shows of a NIC, read with the kernel's own tools (iproute2's JSON, sysctl, ethtool) in the
// NIC's namespace — independent of our addon — and the comparison of two such captures: every difference outside
// an allow-list of kernel-owned fields (ifindex, counters, lifetimes that tick) is named. Plain CommonJS, so that
// both the host tier (test/helpers/state-diff.ts, through vitest) and the kernel lab (test/lab/lib/state-diff.js,
// plain node in the VM) read the same capture and the same allow-list.
'use strict';

const { execFileSync } = require('node:child_process');

/** Fields the kernel owns: they may differ after a round trip without anything being lost. */
const KERNEL_OWNED = new Set([
  // kept when the index is free in the namespace the NIC comes back to, renumbered otherwise: not the owner's
  'ifindex',
  // the veth peer's ifindex does not change, but a physical NIC has none: kept out of the comparison alike
  'link_index',
  // lifetimes tick: an address that does not expire shows 4294967295 before and after, which stays compared
  'valid_life_time:finite',
  'preferred_life_time:finite',
]);

/** `cmd args` in named namespace `netns` (null: ours); stdout. */
function run(netns, cmd, args) {
  const argv = netns ? ['netns', 'exec', netns, cmd, ...args] : args;
  return execFileSync(netns ? 'ip' : cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function json(netns, ...args) {
  const out = run(netns, 'ip', ['-j', ...args]).trim();
  return out ? JSON.parse(out) : [];
}

function throughNic(r, nic) {
  return r.dev === nic || (Array.isArray(r.nexthops) && r.nexthops.some((h) => h.dev === nic));
}

/** Items by a key that names them in a difference ('192.0.2.10/24.label'), a repeated key numbered. */
function byKey(items, key) {
  const out = {};
  for (const x of items) {
    let k = key(x);
    for (let n = 2; k in out; n++) k = `${key(x)}#${n}`;
    out[k] = x;
  }
  return out;
}

function sysctlsOf(netns, nic) {
  const escaped = nic.replace(/[.]/g, '\\.');
  let out = '';
  try {
    out = run(netns, 'sysctl', ['-a', '-r', `^net\\.ipv[46]\\.(conf|neigh)\\.${escaped}\\.`]);
  } catch (err) {
    // sysctl exits non-zero for the entries it cannot read (stable_secret before it is set) and prints the rest
    out = err.stdout ?? '';
  }
  const map = {};
  for (const line of out.split('\n')) {
    const eq = line.indexOf(' = ');
    if (eq > 0) map[line.slice(0, eq)] = line.slice(eq + 3);
  }
  return map;
}

function featuresOf(netns, nic) {
  try {
    return JSON.parse(run(netns, 'ethtool', ['--json', '-k', nic]));
  } catch {
    return null;
  }
}

function optionalJson(netns, ...args) {
  try {
    return json(netns, ...args);
  } catch {
    return []; // a kernel without nexthop objects
  }
}

/** The NIC's addresses (iproute2's addr_info), or null while IPv6 duplicate address detection has not settled. */
function settledAddresses(netns, nic) {
  const info = json(netns, 'addr', 'show', 'dev', nic)[0]?.addr_info ?? [];
  return info.some((a) => a.tentative) ? null : info;
}

/** The rest of the NIC's state, beside its addresses `addrs` (from settledAddresses). */
function readNic(netns, nic, addrs) {
  const [link] = json(netns, '-d', 'link', 'show', 'dev', nic);
  const routes = [...json(netns, '-4', 'route', 'show', 'table', 'all'), ...json(netns, '-6', 'route', 'show', 'table', 'all')].filter((r) => throughNic(r, nic));
  return {
    link,
    addresses: byKey(addrs, (a) => `${a.local}/${a.prefixlen}`),
    routes: byKey(routes, (r) => `${r.type ?? 'unicast'} ${r.dst} table ${r.table ?? 'main'} metric ${r.metric ?? '-'}`),
    rules: [...json(netns, '-4', 'rule', 'show'), ...json(netns, '-6', 'rule', 'show')],
    nexthops: optionalJson(netns, 'nexthop', 'show'),
    sysctls: sysctlsOf(netns, nic),
    features: featuresOf(netns, nic),
  };
}

/** Of `capture`, the rules naming `nic` and the nexthop objects through it, with the groups holding them. */
function onlyNic(capture, nic) {
  const ids = new Set(capture.nexthops.filter((h) => h.dev === nic).map((h) => h.id));
  return {
    ...capture,
    rules: capture.rules.filter((r) => r.iif === nic || r.oif === nic),
    nexthops: capture.nexthops.filter((h) => ids.has(h.id) || (Array.isArray(h.group) && h.group.some((m) => ids.has(m.id)))),
  };
}

function flatten(v, path, out) {
  if (Array.isArray(v)) {
    v.forEach((x, i) => flatten(x, `${path}[${i}]`, out));
    if (v.length === 0) out.set(path, '[]');
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) flatten(x, path ? `${path}.${k}` : k, out);
  } else {
    out.set(path, v);
  }
}

function kernelOwned(path, before, after) {
  const leaf = path.slice(path.lastIndexOf('.') + 1);
  if (KERNEL_OWNED.has(leaf)) return true;
  const forever = 4294967295;
  return KERNEL_OWNED.has(`${leaf}:finite`) && before !== forever && after !== forever && before !== undefined && after !== undefined;
}

/** Every difference between two captures, as 'path: before → after', outside the kernel-owned fields. */
function diffCaptures(before, after) {
  const a = new Map();
  const b = new Map();
  flatten(before, '', a);
  flatten(after, '', b);
  const out = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(path);
    const y = b.get(path);
    if (x === y || kernelOwned(path, x, y)) continue;
    out.push(`${path}: ${JSON.stringify(x)} → ${JSON.stringify(y)}`);
  }
  return out;
}

module.exports = { KERNEL_OWNED, settledAddresses, readNic, onlyNic, diffCaptures };
