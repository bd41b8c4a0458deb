// Generated hostile inputs for the CNI plugin and the CLI, reproducible from a seed: a valid ADD for the test's
// stand-in NIC and pod, then 1–3 mutations of its environment or its stdin. Nothing generated may name a real host
// link (eth0, lo, their MACs or PCI addresses) or a real state dir or sysfs tree: a generated input that some bug
// let through must only ever be able to touch the test's own stand-in.

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** The test's world, as the generator may use it. */
export interface HostileWorld {
  stateDir: string;
  sysfsRoot: string;
  pod: string;
  nic: { name: string; mac: string };
  /** A FIFO, a regular file and a group/other-writable directory of the test's own. */
  fifo: string;
  file: string;
  openDir: string;
}

export interface CniCase {
  env: Record<string, string>;
  stdin: string;
  /** Sure to be refused (a wrong type, a bad path, …); otherwise any documented outcome is acceptable. */
  mustFail: boolean;
  /** What was done to the valid input, for the failure message. */
  what: string[];
}

function controlAndUnicode(r: Rand): string {
  return pick(r, ['\u0000', '\n', '\r\n', '\u001b[31m', '\u202e', '\ud800', '\uffff', 'é', '日本', '🦀', '\t', '\u0085', '\u2028']);
}

function hostileString(r: Rand): string {
  return pick(r, [
    '',
    ' ',
    '../../../../etc/passwd',
    '/etc/shadow',
    '..',
    '.',
    '/',
    'a'.repeat(int(r, 16, 5000)),
    `x${controlAndUnicode(r)}y`,
    '$(reboot)',
    '`id`',
    '%s%n%x',
    '-rf',
    '--help',
    'null',
  ]);
}

/** A JSON value of the wrong kind, or a number no field wants. */
function hostileValue(r: Rand): unknown {
  return pick<() => unknown>(r, [
    () => null,
    () => true,
    () => [],
    () => ({}),
    () => -1,
    () => 0,
    () => 2 ** 53 + 1,
    () => -(2 ** 31),
    () => 1.5,
    () => 1e308,
    () => [hostileString(r)],
    () => ({ __proto__: { polluted: 1 }, constructor: { prototype: {} } }),
    () => hostileString(r),
  ])();
}

function deepJson(depth: number, r: Rand): string {
  const open = r() < 0.5 ? '['.repeat(depth) : '{"a":'.repeat(depth);
  const close = open.startsWith('[') ? ']'.repeat(depth) : '}'.repeat(depth);
  return r() < 0.3 ? open : open + '1' + close;
}

const BAD_MACS = ['zz:zz:zz:zz:zz:zz', '01:00:5e:00:00:01', 'ff:ff:ff:ff:ff:ff', '00:00:00:00:00:00', '02:5a:00:00:00', '02:5a:00:00:00:00:00'];
const BAD_PCI = ['0000:00:00.8', 'zzzz:zz:zz.z', '../../../devices', 'ffff:ff:1f.7', '0000:ff:ff.ff', '0000:00:1f', ' 0000:ff:1f.7'];
const VERBS = ['ADD', 'DEL', 'CHECK', 'STATUS', 'GC', 'VERSION', 'add', 'ADD ', 'FOO', '', 'DEL\u0000', 'ADD;DEL'];

/** The valid ADD all cases start from (host-local-free: static IPAM, one address). */
export function validAdd(w: HostileWorld, n: number): { env: Record<string, string>; conf: Record<string, any> } {
  return {
    env: {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      SRIOVCTL_STATE_DIR: w.stateDir,
      SRIOVCTL_SYSFS_ROOT: w.sysfsRoot,
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: `hostile-${n}`,
      CNI_NETNS: `/var/run/netns/${w.pod}`,
      CNI_IFNAME: 'net1',
      CNI_PATH: '/usr/lib/cni',
    },
    conf: {
      cniVersion: '1.1.0',
      name: 'hostile',
      type: 'sriovctl-cni',
      device: w.nic.name,
      ipam: { type: 'static', addresses: [{ address: '10.99.0.2/24' }] },
    },
  };
}

type Mutation = (r: Rand, w: HostileWorld, c: { env: Record<string, string>; conf: Record<string, any>; raw: string | null }) => { what: string; mustFail: Refusal | (() => Refusal) };

/** Which verbs must refuse the mutated input: ADD only, every verb but VERSION, or none for sure. */
type Refusal = 'add' | 'any' | false;

const CNI_VARS = ['CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'];

const MUTATIONS: Mutation[] = [
  (r, _w, c) => {
    const v = pick(r, CNI_VARS);
    delete c.env[v];
    // no CNI_COMMAND is a person running the plugin (the Go skel's "about" answer, exit 0), not a refusal
    return { what: `no ${v}`, mustFail: () => !(v in c.env) && v !== 'CNI_COMMAND' && v !== 'CNI_PATH' && 'add' };
  },
  (r, _w, c) => {
    const v = pick(r, VERBS);
    c.env.CNI_COMMAND = v;
    return { what: `CNI_COMMAND=${JSON.stringify(v)}`, mustFail: false };
  },
  (r, w, c) => {
    const v = pick(r, [w.fifo, w.file, w.openDir, '/dev/null', '/dev/zero', '/proc/self/ns/net', '/proc/1/ns/mnt', '/var/run/netns/../../../etc/passwd', '/nonexistent/ns', '', 'relative/ns']);
    c.env.CNI_NETNS = v;
    // DEL of something never added succeeds whatever the namespace (the spec's idempotent DEL)
    return { what: `CNI_NETNS=${JSON.stringify(v)}`, mustFail: () => c.env.CNI_NETNS === v && 'add' };
  },
  (r, _w, c) => {
    const v = pick(r, ['', 'a'.repeat(16), 'eth/0', '.', '..', 'a b', 'net:1', `n${controlAndUnicode(r)}`, 'lo', 'all', 'default']);
    c.env.CNI_IFNAME = v;
    return { what: `CNI_IFNAME=${JSON.stringify(v)}`, mustFail: false };
  },
  (r, _w, c) => {
    const v = pick(r, ['', '../x', 'a'.repeat(int(r, 100, 4000)), `id${controlAndUnicode(r)}`, '-', '.']);
    c.env.CNI_CONTAINERID = v;
    return { what: `CNI_CONTAINERID=${JSON.stringify(v.slice(0, 40))}`, mustFail: false };
  },
  (r, _w, c) => {
    const v = pick(r, ['IgnoreUnknown=1;K8S_POD_NAME=x', '=;=;', 'a', 'MAC=zz', ';;;;', 'IgnoreUnknown=true;foo=bar', 'foo=bar', `K8S_POD_NAME=${'p'.repeat(int(r, 10, 20000))}`, 'IP=1.2.3.4=5', `x=${controlAndUnicode(r)}`]);
    c.env.CNI_ARGS = v;
    return { what: `CNI_ARGS=${JSON.stringify(v.slice(0, 40))}`, mustFail: false };
  },
  (r, w, c) => {
    const v = pick(r, ['', '/nonexistent', '../../', ':', 'relative', `${w.file}`, '/usr/lib/cni:/usr/lib/cni', '/dev/null']);
    c.env.CNI_PATH = v;
    return { what: `CNI_PATH=${JSON.stringify(v)}`, mustFail: false };
  },
  (r, w, c) => {
    const v = pick(r, [w.file, w.openDir, `${w.file}/sub`]);
    c.env.SRIOVCTL_STATE_DIR = v;
    return { what: `SRIOVCTL_STATE_DIR=${v}`, mustFail: () => c.env.SRIOVCTL_STATE_DIR === v && 'any' };
  },
  (r, _w, c) => {
    const f = pick(r, ['cniVersion', 'name', 'type', 'device', 'ipam', 'mac', 'vlan', 'vlanQoS', 'vlanProto', 'spoofchk', 'trust', 'allowDefaultRouteLink', 'logLevel', 'runtimeConfig', 'args', 'capabilities', 'dns', 'prevResult', 'kernelpath', 'hwaddr', 'pciBusID', 'deviceID']);
    c.conf[f] = hostileValue(r);
    return { what: `${f}=hostile value`, mustFail: false };
  },
  (r, _w, c) => {
    const v = pick(r, ['../../../bin/sh', '/bin/true', 'host-local/../static', 'static\u0000', '..', 'a'.repeat(300), 'sriovctl-cni']);
    c.conf.ipam = { ...c.conf.ipam, type: v };
    return { what: `ipam.type=${JSON.stringify(v)}`, mustFail: () => c.conf.ipam?.type === v && 'add' };
  },
  (r, _w, c) => {
    c.conf.ipam = pick<unknown>(r, [null, 'static', [], { type: 'static', addresses: 'x' }, { type: 'static', addresses: [{ address: '300.1.1.1/33' }] }, { type: 'host-local' }, { type: 'static', routes: [{ dst: 'x' }] }]);
    return { what: 'ipam garbage', mustFail: false };
  },
  (r, _w, c) => {
    const v = pick(r, ['../../../../etc/passwd', '/var/log/../../etc/shadow', '/dev/tty', '/proc/self/fd/1', 'relative.log', '/etc/cron.d/x', '/var/log/']);
    c.conf.logFile = v;
    return { what: `logFile=${JSON.stringify(v)}`, mustFail: () => c.conf.logFile === v && 'add' };
  },
  (r, w, c) => {
    const v = pick(r, ['../../../../etc', '/dev/sda', 'a'.repeat(16), `${w.nic.name}${controlAndUnicode(r)}`, '', '/', `../${w.nic.name}`, `${w.nic.name}/../lo`]);
    c.conf.device = v;
    return { what: `device=${JSON.stringify(v)}`, mustFail: () => c.conf.device === v && 'add' };
  },
  (r, _w, c) => {
    const v = pick(r, ['../../../../class/net/lo', '/sys/class/net/../../../etc', '/proc/self', '', 'devices/../../..']);
    delete c.conf.device;
    c.conf.kernelpath = v;
    return { what: `kernelpath=${JSON.stringify(v)}`, mustFail: () => c.conf.kernelpath === v && 'add' };
  },
  (r, _w, c) => {
    const v = pick(r, BAD_MACS);
    if (r() < 0.5) c.conf.mac = v;
    else {
      delete c.conf.device;
      c.conf.hwaddr = v;
    }
    return { what: `mac/hwaddr=${v}`, mustFail: () => (c.conf.mac === v || c.conf.hwaddr === v) && 'add' };
  },
  (r, _w, c) => {
    const v = pick(r, BAD_PCI);
    delete c.conf.device;
    const f = pick(r, ['pciBusID', 'deviceID']);
    c.conf[f] = v;
    return { what: `${f}=${JSON.stringify(v)}`, mustFail: () => c.conf[f] === v && 'add' };
  },
  (r, _w, c) => {
    c.conf.prevResult = pick<() => unknown>(r, [
      () => 'garbage',
      () => ({ interfaces: 'x', ips: [{ address: 'bad' }] }),
      () => ({ cniVersion: '1.1.0', interfaces: [{ name: 'net1', sandbox: '/etc/passwd' }], ips: [{ address: '10.0.0.1/24', interface: 99 }] }),
      () => JSON.parse(deepJson(int(r, 50, 500), () => 0.9)),
    ])();
    return { what: 'prevResult garbage', mustFail: false };
  },
  (r, _w, c) => {
    const v = pick(r, ['0.1.0', '0.3.1', '0.4.0', '1.0.0', '99.0.0', '1.1.0\n', '1.1', 'v1.1.0', '']);
    c.conf.cniVersion = v;
    return { what: `cniVersion=${JSON.stringify(v)}`, mustFail: false };
  },
  (r, _w, c) => {
    const v = pick(r, ['', '../net', 'a/b', '-x', `n${controlAndUnicode(r)}`, '.']);
    c.conf.name = v;
    return { what: `name=${JSON.stringify(v)}`, mustFail: () => c.conf.name === v && 'add' };
  },
  (r, _w, c) => {
    const v = pick(r, [-1, 4095, 4096, 1.5, 2 ** 40]);
    c.conf.vlan = v;
    return { what: `vlan=${v}`, mustFail: () => c.conf.vlan === v && 'add' };
  },
  // stdin that is not a config at all
  (r, _w, c) => {
    c.raw = pick<() => string>(r, [
      () => '',
      () => 'null',
      () => '[]',
      () => '1',
      () => '"str"',
      () => '{"cniVersion":"1.1.0","name":',
      () => deepJson(int(r, 1000, 200_000), r),
      () => '\u0000\u0001\u00ff',
      () => Buffer.from(Array.from({ length: int(r, 1, 200) }, () => int(r, 0, 255))).toString('latin1'),
      () => `{"cniVersion":"1.1.0","name":"hostile","type":"sriovctl-cni","pad":"${'x'.repeat((1 << 20) + 10)}"}`,
      () => '{"cniVersion": 1e309, "name": "hostile", "type": "sriovctl-cni"}',
    ])();
    return { what: `stdin ${JSON.stringify(c.raw.slice(0, 30))}${c.raw.length > 30 ? `… (${c.raw.length} chars)` : ''}`, mustFail: 'any' };
  },
];

/** The valid ADD is every VALID_EVERY-th case. */
const VALID_EVERY = 250;

/** Case `n` of the suite: the valid ADD or 1–3 mutations of it. */
export function cniCase(r: Rand, w: HostileWorld, n: number): CniCase {
  const base = validAdd(w, n);
  const c = { env: base.env, conf: base.conf, raw: null as string | null };
  const what: string[] = [];
  const refusals: (Refusal | (() => Refusal))[] = [];
  if (n % VALID_EVERY !== 0) {
    for (let k = int(r, 1, 3); k > 0; k--) {
      const m = pick(r, MUTATIONS)(r, w, c);
      what.push(m.what);
      refusals.push(m.mustFail);
    }
  }
  // judged on the final verb: a later mutation may have changed it
  const verb = c.env.CNI_COMMAND;
  // an unset or empty verb gets the plugin's "about" answer, whatever else is wrong
  const about = !verb;
  const known = about || ['ADD', 'DEL', 'CHECK', 'STATUS', 'GC', 'VERSION'].includes(verb);
  // judged once every mutation is done: a later one may have undone an earlier one
  const final = refusals.map((f) => (typeof f === 'function' ? f() : f));
  const refusedAdd = final.some((f) => f === 'any' || f === 'add');
  // a lend and its give-back cost ~100x a refusal: most mutated inputs that would still lend ask another verb
  if (n % VALID_EVERY !== 0 && verb === 'ADD' && !refusedAdd && r() < 0.9) {
    c.env.CNI_COMMAND = pick(r, ['CHECK', 'CHECK', 'CHECK', 'DEL', 'STATUS', 'GC']);
    what.push(`then ${c.env.CNI_COMMAND}`);
  }
  const mustFail = !known || (!about && c.env.CNI_COMMAND !== 'VERSION' && final.some((f) => f === 'any' || (f === 'add' && c.env.CNI_COMMAND === 'ADD')));
  // an environment cannot hold a NUL (execve takes C strings; no runtime can pass one): NULs go to stdin only
  const env = Object.fromEntries(Object.entries(c.env).map(([k, v]) => [k, v.replaceAll('\u0000', '^@')]));
  return { env, stdin: c.raw ?? JSON.stringify(c.conf), mustFail, what };
}

/** CLI argument vectors: every subcommand but `cluster` (which starts clusters) with hostile arguments. */
export function cliCase(r: Rand, w: HostileWorld): string[] {
  const nic = () => pick(r, [w.nic.name, 'nonexistent0', '0000:ff:1f.7', 'zzzz:zz', hostileString(r), `${w.nic.name}${controlAndUnicode(r)}`]);
  const target = () => pick(r, [w.fifo, w.file, '/dev/null', 'pid:-1', 'pid:0', 'pid:99999999', 'pid:abc', 'docker:;reboot', 'podman:', '/proc/self/ns/mnt', 'nonexistent-ns', hostileString(r)]);
  const num = () => pick(r, ['-1', '0', '1e9', '99999999999999999999', 'NaN', 'abc', '', '1.5', '0x10']);
  const extra = () => pick(r, [[], ['--bogus'], ['-v'], ['-q'], ['--json'], ['--as', hostileString(r)], ['--vfs', num()], ['--driver', hostileString(r)], ['--timeout', num()], ['--state-dir', w.file], ['--sysfs-root', w.file], ['--', '-x']]);
  const cmd = pick<() => string[]>(r, [
    () => ['attach', nic(), target()],
    () => ['attach', nic()],
    () => ['attach'],
    () => ['detach', nic()],
    () => ['detach', '--all', '--target', target()],
    () => ['detach'],
    () => ['status', '--json'],
    () => ['vfs', nic(), num()],
    () => ['vfs'],
    () => ['cleanup', '--dry-run'],
    () => [hostileString(r)],
    () => ['--version'],
    () => [],
  ])();
  // an argument vector cannot hold a NUL (execve takes C strings)
  return [...cmd, ...extra()].map((a) => a.replaceAll('\u0000', '^@'));
}
