// Everything the kernel shows of a NIC, captured with the kernel's own tools (iproute2's JSON, sysctl, ethtool) in the
// NIC's namespace — independent of our addon — and compared before and after a round trip: every difference outside
// an allow-list of kernel-owned fields (ifindex, counters, lifetimes that tick) is named.
import { execFileSync } from 'node:child_process';
import { waitFor } from './kernel';

export interface NicCapture {
  link: unknown;
  /** By 'address/prefix' (an IPv4 secondary says so in its flags). */
  addresses: Record<string, unknown>;
  /** Every route of both families, in every table, whose device or any nexthop's is the NIC, by 'type dst table metric'. */
  routes: Record<string, unknown>;
  rules: unknown[];
  nexthops: unknown[];
  /** net.ipv4.conf.<nic>.*, net.ipv6.conf.<nic>.*, net.ipv4.neigh.<nic>.*, net.ipv6.neigh.<nic>.* */
  sysctls: Record<string, string>;
  /** ethtool -k, where the driver has features. */
  features: unknown;
}

/** Fields the kernel owns: they may differ after a round trip without anything being lost. */
const KERNEL_OWNED = new Set([
  'ifindex',
  // the veth peer's ifindex does not change, but a physical NIC has none: kept out of the comparison alike
  'link_index',
  // lifetimes tick: an address that does not expire shows 4294967295 before and after, which stays compared
  'valid_life_time:finite',
  'preferred_life_time:finite',
]);

function run(netns: string | null, cmd: string, args: string[]): string {
  const argv = netns ? ['netns', 'exec', netns, cmd, ...args] : args;
  return execFileSync(netns ? 'ip' : cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function json(netns: string | null, ...args: string[]): any[] {
  const out = run(netns, 'ip', ['-j', ...args]).trim();
  return out ? JSON.parse(out) : [];
}

function throughNic(r: any, nic: string): boolean {
  return r.dev === nic || (Array.isArray(r.nexthops) && r.nexthops.some((h: any) => h.dev === nic));
}

/** Items by a key that names them in a difference ('192.0.2.10/24.label'), a repeated key numbered. */
function byKey(items: any[], key: (x: any) => string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const x of items) {
    let k = key(x);
    for (let n = 2; k in out; n++) k = `${key(x)}#${n}`;
    out[k] = x;
  }
  return out;
}

function sysctlsOf(netns: string | null, nic: string): Record<string, string> {
  const escaped = nic.replace(/[.]/g, '\\.');
  let out = '';
  try {
    out = run(netns, 'sysctl', ['-a', '-r', `^net\\.ipv[46]\\.(conf|neigh)\\.${escaped}\\.`]);
  } catch (err) {
    // sysctl exits non-zero for the entries it cannot read (stable_secret before it is set) and prints the rest
    out = (err as { stdout?: string }).stdout ?? '';
  }
  const map: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const eq = line.indexOf(' = ');
    if (eq > 0) map[line.slice(0, eq)] = line.slice(eq + 3);
  }
  return map;
}

function featuresOf(netns: string | null, nic: string): unknown {
  try {
    return JSON.parse(run(netns, 'ethtool', ['--json', '-k', nic]));
  } catch {
    return null;
  }
}

function optionalJson(netns: string | null, ...args: string[]): any[] {
  try {
    return json(netns, ...args);
  } catch {
    return []; // a kernel without nexthop objects
  }
}

/** Rules naming `nic`; nexthop objects through it, and the groups holding them. */
function onlyNic(capture: NicCapture, nic: string): NicCapture {
  const nexthops = capture.nexthops as any[];
  const ids = new Set(nexthops.filter((h) => h.dev === nic).map((h) => h.id));
  return {
    ...capture,
    rules: (capture.rules as any[]).filter((r) => r.iif === nic || r.oif === nic),
    nexthops: nexthops.filter((h) => ids.has(h.id) || (Array.isArray(h.group) && h.group.some((m: any) => ids.has(m.id)))),
  };
}

/**
 * The NIC `nic` in named namespace `netns` (null: ours), once IPv6 duplicate address detection has settled. `shared`:
 * the namespace is shared with others (the initial one): of its rules and nexthop objects, only those of the NIC.
 */
export async function captureNic(netns: string | null, nic: string, opts: { shared?: boolean } = {}): Promise<NicCapture> {
  const all = await captureAll(netns, nic);
  return opts.shared ? onlyNic(all, nic) : all;
}

async function captureAll(netns: string | null, nic: string): Promise<NicCapture> {
  const addrs = await waitFor(() => {
    const info = json(netns, 'addr', 'show', 'dev', nic)[0]?.addr_info ?? [];
    return info.some((a: any) => a.tentative) ? null : info;
  });
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

function flatten(v: unknown, path: string, out: Map<string, unknown>): void {
  if (Array.isArray(v)) {
    v.forEach((x, i) => flatten(x, `${path}[${i}]`, out));
    if (v.length === 0) out.set(path, '[]');
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) flatten(x, path ? `${path}.${k}` : k, out);
  } else {
    out.set(path, v);
  }
}

function kernelOwned(path: string, before: unknown, after: unknown): boolean {
  const leaf = path.slice(path.lastIndexOf('.') + 1);
  if (KERNEL_OWNED.has(leaf)) return true;
  const forever = 4294967295;
  return KERNEL_OWNED.has(`${leaf}:finite`) && before !== forever && after !== forever && before !== undefined && after !== undefined;
}

/** Every difference between two captures, as 'path: before → after', outside the kernel-owned fields. */
export function diffCaptures(before: NicCapture, after: NicCapture): string[] {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  flatten(before, '', a);
  flatten(after, '', b);
  const out: string[] = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(path);
    const y = b.get(path);
    if (x === y || kernelOwned(path, x, y)) continue;
    out.push(`${path}: ${JSON.stringify(x)} → ${JSON.stringify(y)}`);
  }
  return out;
}
