// A node at scale, through the shim + daemon: a node that boots with CONCURRENT pods asks for their ADDs at once —
// against the same ADDs at once of Debian's host-device, alternated batches, each pod its own namespace and NIC, all
// of them required to succeed; and the daemon's memory over a node's life: its RSS after RSS_PAIRS ADD/DEL pairs
// against after the first RSS_BASE_PAIRS (no leak), and its value in MiB. Needs root, `npm run build` and /usr/lib/cni.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, rotate, roundRatios } from './bench-helpers.mjs';
import { CNI_DIR, ipIfThere, withCniWorld } from './cni-world.mjs';
import { startDaemon } from './daemon-process.mjs';
import { buildKernelFloor } from './kernel-floor.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const wire = require(join(ROOT, 'dist', 'daemon', 'wire.js'));
const SHIM = join(ROOT, 'build', 'Release', 'sriovctl-cni');
const CONCURRENT = Number(process.env.NODE_BENCH_CONCURRENT) || 64;
// a batch of 64 ADDs is 64 namespace moves (the kernel serializes them, 14–30 ms each) and 64 IPAM execs: a second or
// more per batch, and the rounds' ratios spread less than single pairs do
const BATCH_ROUNDS = Number(process.env.NODE_BENCH_BATCH_ROUNDS) || 9;
// about 60 ms a pair here: the 10 000 pairs take about 10 minutes, most of the bench's time; lower it to explore
const RSS_PAIRS = Number(process.env.DAEMON_BENCH_PAIRS) || 10_000;
const RSS_BASE_PAIRS = Math.min(1000, RSS_PAIRS);
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

export default async function nodeScaleBench(ctx) {
  if (!existsSync(SHIM)) throw new Error(`${SHIM} is missing (npm ci / node-gyp rebuild)`);
  await withCniWorld(ctx, async ({ scratch, env, ours }) => {
    mkdirSync(join(scratch, 'run'), { mode: 0o700 });
    const socket = join(scratch, 'run', 'cni.sock');
    const daemon = await startDaemon(socket);
    try {
      await memoryOverPairs(ctx, daemon.pid, socket, env, ours);
      await concurrentAdds(ctx, socket, env, ours, buildKernelFloor(scratch));
      ctx.log(`daemon RSS after the concurrent batches: ${rssMiB(daemon.pid).toFixed(1)} MiB`);
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
    }
  });
}

const statusMiB = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const rssMiB = (pid) => statusMiB(pid, 'VmRSS');
/** The resident set's two parts: anonymous (heap, stacks, malloc) and file-backed (mostly node's own text, shared). */
const rssParts = (pid) => `${statusMiB(pid, 'RssAnon').toFixed(1)} MiB anonymous + ${statusMiB(pid, 'RssFile').toFixed(1)} MiB file-backed`;

/** ADD/DEL pairs of the world's pod straight over the socket (what the shim sends: the shim adds nothing to the daemon). */
async function memoryOverPairs(ctx, pid, socket, env, ours) {
  const stdin = JSON.stringify(ours);
  const t0 = performance.now();
  let base = 0;
  let retried = 0;
  // a link dump the machine's other link changes kept interrupting (EAGAIN, after the addon's own retries) is tried
  // again, and counted: over thousands of pairs on a busy machine it happens, and it is not what this measures
  const callOnce = async (command) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await viaSocket(socket, { ...env, CNI_COMMAND: command }, stdin);
      } catch (err) {
        if (attempt === 20 || !/EAGAIN/.test(err.message)) throw err;
        retried++;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  for (let i = 1; i <= RSS_PAIRS; i++) {
    await callOnce('ADD');
    await callOnce('DEL');
    if (i === RSS_BASE_PAIRS) {
      base = rssMiB(pid);
      ctx.log(`daemon RSS after ${RSS_BASE_PAIRS} pairs: ${rssParts(pid)}`);
    }
  }
  const end = rssMiB(pid);
  ctx.log(`daemon RSS after ${RSS_PAIRS} pairs: ${rssParts(pid)}`);
  ctx.log(`daemon RSS ${base.toFixed(1)} MiB after ${RSS_BASE_PAIRS} ADD/DEL pairs, ${end.toFixed(1)} MiB after ${RSS_PAIRS} (${((performance.now() - t0) / RSS_PAIRS).toFixed(1)} ms a pair${retried ? `; ${retried} calls tried again after EAGAIN` : ''})`);
  ctx.ratio(`daemon:rss-${RSS_PAIRS}/${RSS_BASE_PAIRS}`, end / base, { max: 1.1 });
  ctx.ratio(`daemon:rss-mib-after-${RSS_PAIRS}`, end, { max: 64 });
}

/** One call straight over the socket; rejects unless it exits 0. */
function viaSocket(socket, env, stdin) {
  return new Promise((resolve, reject) => {
    const c = connect(socket);
    let buf = Buffer.alloc(0);
    let sent = false;
    c.on('error', reject);
    c.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!sent && buf.length >= wire.HELLO_BYTES) {
        if (wire.decodeHello(buf.subarray(0, wire.HELLO_BYTES)) !== wire.Verdict.go) return reject(new Error('declined'));
        sent = true;
        buf = buf.subarray(wire.HELLO_BYTES);
        c.end(wire.encodeRequest({ kind: wire.RequestKind.cni, env, stdinState: wire.StdinState.read, stdin }));
      }
    });
    c.on('end', () => {
      const h = wire.decodeReplyHeader(buf.subarray(0, wire.REPLY_HEADER_BYTES));
      if (h.exitCode !== 0) reject(new Error(buf.toString('utf8', wire.REPLY_HEADER_BYTES)));
      else resolve();
    });
  });
}

function spawnAsync(argv, env, input) {
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0], argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv[0]} ${env.CNI_COMMAND} ${env.CNI_CONTAINERID}: exit ${code}: ${out}`))));
    c.stdin.end(input);
  });
}

/**
 * CONCURRENT pods, each with its own namespace and NIC (a veth whose peer is up: carrier, as a NIC in service has),
 * ADDed all at once through the daemon, against the same with host-device and with the kernel floor (its `add`: the
 * IPAM exec, the move renamed in one request, up, the address; 64 processes at once, as host-device's are); each
 * batch's DELs follow, untimed.
 */
async function concurrentAdds(ctx, socket, base, ours, kernelFloor) {
  const tag = ours.device.slice(0, -1);
  const pods = Array.from({ length: CONCURRENT }, (_, i) => ({ nic: `${tag}n${i}`, netns: `${tag}p${i}` }));
  const addressOf = (i) => `10.124.${i >> 6}.${(i & 63) + 2}/24`;
  const confOf = (type, i) => {
    const ipam = { type: 'static', addresses: [{ address: addressOf(i) }] };
    return JSON.stringify({ cniVersion: '1.0.0', name: ours.name, type, ...(type === 'sriovctl-cni' ? { logLevel: 'error' } : {}), device: pods[i].nic, ipam });
  };
  const envOf = (i, command, extra) => ({
    ...base,
    ...extra,
    CNI_COMMAND: command,
    CNI_CONTAINERID: `${base.CNI_CONTAINERID}-${i}`,
    CNI_NETNS: `/var/run/netns/${pods[i].netns}`,
    CNI_IFNAME: 'net1',
  });
  try {
    for (const p of pods) {
      ip('netns', 'add', p.netns);
      ip('link', 'add', p.nic, 'type', 'veth', 'peer', 'name', `${p.nic}p`);
      ip('link', 'set', `${p.nic}p`, 'up');
    }
    // as in the RSS pairs: a call whose link dump the machine's churn kept interrupting (EAGAIN) is tried again, and
    // counted; its time stays in the batch's
    const retried = { shimDaemon: 0, hostDevice: 0, kernelFloor: 0 };
    const once = async (name, argv, env, input) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await spawnAsync(argv, env, input);
        } catch (err) {
          if (attempt === 20 || !/EAGAIN/.test(err.message)) throw err;
          retried[name]++;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const batch = async (name, { argvOf, type, extra }) => {
      const t0 = performance.now();
      await Promise.all(pods.map((_, i) => once(name, argvOf(i, 'add'), envOf(i, 'ADD', extra), confOf(type, i))));
      const ms = performance.now() - t0;
      await Promise.all(pods.map((_, i) => once(name, argvOf(i, 'del'), envOf(i, 'DEL', extra), confOf(type, i))));
      return ms;
    };
    const contenders = {
      shimDaemon: { argvOf: () => [SHIM], type: 'sriovctl-cni', extra: { SRIOVCTL_SOCKET: socket } },
      hostDevice: { argvOf: () => [join(CNI_DIR, 'host-device')], type: 'host-device', extra: {} },
      kernelFloor: { argvOf: (i, verb) => [kernelFloor, pods[i].nic, 'static', addressOf(i), '-', verb], type: 'host-device', extra: {} },
    };
    const t = { shimDaemon: [], hostDevice: [], kernelFloor: [] };
    for (const [name, c] of Object.entries(contenders)) await batch(name, c); // warm-up
    for (let r = 0; r < BATCH_ROUNDS; r++) {
      for (const name of rotate(Object.keys(contenders), r)) t[name].push(await batch(name, contenders[name]));
    }
    if (Object.values(retried).some(Boolean)) ctx.log(`calls tried again after EAGAIN: shim+daemon ${retried.shimDaemon}, host-device ${retried.hostDevice}, kernel floor ${retried.kernelFloor}`);
    ctx.log(`${CONCURRENT} ADDs at once, all succeeded, median of ${BATCH_ROUNDS} alternated batches: shim+daemon ${median(t.shimDaemon).toFixed(0)} ms, host-device ${median(t.hostDevice).toFixed(0)} ms, kernel floor ${median(t.kernelFloor).toFixed(0)} ms`);
    const label = { shimDaemon: 'shim+daemon', hostDevice: 'host-device', kernelFloor: 'kernel-floor' };
    const ratio = (a, b, target) => ctx.ratio(`${label[a]}/${label[b]}:${CONCURRENT}-concurrent-add`, median(t[a]) / median(t[b]), target, roundRatios(t[a], t[b]));
    ratio('shimDaemon', 'hostDevice', { max: 0.8 });
    // how far each is from what the kernel must do for the same pods at once (reported)
    ratio('shimDaemon', 'kernelFloor', {});
    ratio('hostDevice', 'kernelFloor', {});
  } finally {
    for (const p of pods) {
      ipIfThere('netns', 'del', p.netns);
      ipIfThere('link', 'del', p.nic);
    }
  }
}
