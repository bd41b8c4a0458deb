// What the CNI benches share: a scratch world (a pod namespace, a veth NIC, a private state dir and an empty sysfs
// tree), the same `static` IPAM config for sriovctl-cni and Debian's host-device, one way to call a plugin, and
// alternated rounds. Needs root and /usr/lib/cni (scripts/ensure-system-deps.sh).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEnv, droppedStartupVariables, rotate, withCleanup } from './bench-helpers.mjs';

export const CNI_DIR = '/usr/lib/cni';
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

/** `ip …` of something that may be gone already (removing what a bench made): a failure is ignored. */
export function ipIfThere(...args) {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

export function elapsedMs(fn) {
  const t0 = process.hrtime.bigint();
  const r = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, r];
}

/** Runs each contender once per round, in rotated order; returns { name: [ms per round] }. */
export function alternate(contenders, rounds) {
  const names = Object.keys(contenders);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of rotate(names, r)) times[name].push(elapsedMs(contenders[name])[0]);
  }
  return times;
}

// A DEL that follows its ADD at once meets the kernel still busy with the ADD's move: host-device's DEL is 3–4 ms
// faster then than 100 ms or more later, ours is not (measured 0, 30, 100, 300, 1000 ms). A pod lives far longer;
// a settled pair leaves this long between them, untimed.
export const SETTLE_MS = 500;
const SETTLED_ROUNDS = Number(process.env.CNI_BENCH_SETTLED_ROUNDS) || 41;

/**
 * Settled pairs: for each contender (`verb => void`) in rotated order, ADD, SETTLE_MS untimed, then DEL, each verb
 * timed, `rounds` times (CNI_BENCH_SETTLED_ROUNDS, 41); returns { name: { add, del, pair } } (ms per round; pair =
 * that round's ADD + DEL).
 */
export function alternateSettled(contenders, rounds = SETTLED_ROUNDS) {
  const names = Object.keys(contenders);
  const times = Object.fromEntries(names.map((n) => [n, { add: [], del: [], pair: [] }]));
  const settle = new Int32Array(new SharedArrayBuffer(4));
  for (let r = 0; r < rounds; r++) {
    for (const name of rotate(names, r)) {
      const [add] = elapsedMs(() => contenders[name]('ADD'));
      Atomics.wait(settle, 0, 0, SETTLE_MS);
      const [del] = elapsedMs(() => contenders[name]('DEL'));
      times[name].add.push(add);
      times[name].del.push(del);
      times[name].pair.push(add + del);
    }
  }
  return times;
}

/**
 * Calls `body(world)` with a fresh world and removes it afterwards. world.env is every call's environment but
 * CNI_COMMAND. world.call(argv, config, command, opts) runs a
 * plugin (argv[0] is the program; opts.argv0 names it, opts.extraArgs go before argv[1..], opts.env adds
 * variables) and throws when it fails.
 */
export async function withCniWorld(ctx, body) {
  if (process.getuid?.() !== 0) throw new Error('needs root (network namespaces)');
  for (const f of [join(CNI_DIR, 'host-device'), join(CNI_DIR, 'static')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing (scripts/ensure-system-deps.sh)`);
  }
  const p = 'bc' + randomBytes(2).toString('hex');
  const pod = `${p}pod`;
  const nic = `${p}a`;
  const scratch = mkdtempSync(join(tmpdir(), 'sriovctl-cni-bench-'));
  const sysfsRoot = join(scratch, 'sys');
  mkdirSync(join(sysfsRoot, 'bus', 'pci', 'devices'), { recursive: true });
  const cleanup = () => {
    ipIfThere('netns', 'del', pod);
    // destroyed with the namespace, or never made
    ipIfThere('link', 'del', nic);
    rmSync(scratch, { recursive: true, force: true });
  };
  return withCleanup(cleanup, async () => {
    ip('netns', 'add', pod);
    ip('link', 'add', nic, 'type', 'veth', 'peer', 'name', `${p}b`);
    // carrier, as a NIC in service has: without it sriovctl-cni's ADD waits up to 200 ms for one (as sriov-cni)
    ip('link', 'set', `${p}b`, 'up');
    const dropped = droppedStartupVariables();
    if (dropped.length) ctx.log(`every call runs with the CNI variables only, as kubelet's are (left out of this shell: ${dropped.join(', ')})`);
    const base = benchEnv({
      SRIOVCTL_STATE_DIR: join(scratch, 'state'),
      SRIOVCTL_SYSFS_ROOT: sysfsRoot,
      CNI_CONTAINERID: `bench-${p}`,
      CNI_NETNS: `/var/run/netns/${pod}`,
      CNI_IFNAME: 'net1',
      CNI_PATH: CNI_DIR,
    });
    // host-device speaks up to 1.0.0: both get the same config version and the same IPAM
    const ipam = { type: 'static', addresses: [{ address: '10.123.0.5/24', gateway: '10.123.0.1' }], routes: [{ dst: '0.0.0.0/0' }] };
    const ours = { cniVersion: '1.0.0', name: `bench-${p}`, type: 'sriovctl-cni', logLevel: 'error', device: nic, ipam };
    const theirs = { cniVersion: '1.0.0', name: `bench-${p}`, type: 'host-device', device: nic, ipam };
    const call = (argv, config, command, opts = {}) => {
      const r = spawnSync(argv[0], [...(opts.extraArgs ?? []), ...argv.slice(1)], {
        argv0: opts.argv0,
        env: { ...base, ...opts.env, CNI_COMMAND: command },
        input: JSON.stringify(config),
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`${config.type} ${command} failed: ${r.stdout}${r.stderr}`);
      return r;
    };
    /** ADD then DEL of host-device on the same NIC: the baseline every ADD+DEL is compared with. */
    const hostDevice = () => {
      call([join(CNI_DIR, 'host-device')], theirs, 'ADD');
      call([join(CNI_DIR, 'host-device')], theirs, 'DEL');
    };
    return body({ scratch, env: base, ours, theirs, call, hostDevice });
  });
}
