// The resident path: the native shim + `sriovctl daemon` against Debian's host-device (ADD+DEL, same NIC kind,
// same `static` IPAM) and both against the kernel's floor (bench/kernel-floor.c: the same pair's moves, link, address
// and route requests and IPAM execs, nothing else), alternated in the same rounds; against host-device's VERSION;
// the same pair with the pod left to settle between its ADD and its DEL, each verb timed on its own; the shim with no
// daemon against the one-shot plugin; 16 concurrent ADDs through the daemon against 16 one-shot.
// The daemon's memory over many pairs, and 64 ADDs at once against host-device's, are bench/node-scale.bench.mjs.
// Needs root, `npm run build` (the shim is node-gyp's) and /usr/lib/cni.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, roundRatios } from './bench-helpers.mjs';
import { alternate, alternateSettled, CNI_DIR, SETTLE_MS, withCniWorld } from './cni-world.mjs';
import { startDaemon } from './daemon-process.mjs';
import { buildKernelFloor, describeMoves, kernelFloorPair } from './kernel-floor.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { queryDaemon } = require(join(ROOT, 'dist', 'daemon', 'query.js'));
const SHIM = join(ROOT, 'build', 'Release', 'sriovctl-cni');
const PLUGIN = join(ROOT, 'bin', 'sriovctl-cni.js');
// the kernel's move varies 12–35 ms (an RCU barrier), twice per pair: a median of 41 rounds still moved ±3% from run to
// run, of 101 about ±1%
const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS) || 101;
const VERSION_ROUNDS = Number(process.env.CNI_BENCH_VERSION_ROUNDS) || 40;
const CONCURRENT = 16;
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

const rssMiB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

function spawnAsync(argv, env, input) {
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0], argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
    c.stdin.end(input);
  });
}

export default async function daemonBench(ctx) {
  if (!existsSync(SHIM)) throw new Error(`${SHIM} is missing (npm ci / node-gyp rebuild)`);
  await withCniWorld(ctx, async ({ scratch, env: worldEnv, ours, theirs, call, hostDevice }) => {
    mkdirSync(join(scratch, 'run'), { mode: 0o700 });
    const socket = join(scratch, 'run', 'cni.sock');
    const daemon = await startDaemon(socket);
    try {
      const idle = await queryDaemon(socket);
      ctx.log(`daemon RSS at idle (started, no call yet): ${rssMiB(daemon.pid).toFixed(1)} MiB, ${idle.stats.workers?.alive ?? 0} workers`);
      const viaDaemon = { env: { SRIOVCTL_SOCKET: socket } };
      const noDaemon = { env: { SRIOVCTL_SOCKET: join(scratch, 'run', 'none.sock') } };
      const pair = (argv, opts) => () => {
        call(argv, ours, 'ADD', opts);
        call(argv, ours, 'DEL', opts);
      };
      const kernelFloor = kernelFloorPair(buildKernelFloor(scratch), call, ours);
      const contenders = { shimDaemon: pair([SHIM], viaDaemon), hostDevice, kernelFloor };
      for (const c of Object.values(contenders)) c();
      const t = alternate(contenders, ROUNDS);
      const ms = (name) => median(t[name]).toFixed(1);
      ctx.log(`ADD+DEL median: shim+daemon ${ms('shimDaemon')} ms, host-device ${ms('hostDevice')} ms, kernel floor ${ms('kernelFloor')} ms (${ROUNDS} alternated rounds)`);
      // most of every pair: each move waits in the kernel for an RCU grace period, whose end comes on a timer tick
      ctx.log(`kernel floor, each move alone: ${describeMoves(kernelFloor.moves)}`);
      const ratio = (what, a, b, target) => ctx.ratio(what, median(t[a]) / median(t[b]), target, roundRatios(t[a], t[b]));
      ratio('shim+daemon/host-device:add+del', 'shimDaemon', 'hostDevice', { max: 0.8 });
      ratio('shim+daemon/kernel-floor:add+del', 'shimDaemon', 'kernelFloor', { max: 1.3 });
      ratio('host-device/kernel-floor:add+del', 'hostDevice', 'kernelFloor', {});

      settledPairs(ctx, {
        shimDaemon: (verb) => call([SHIM], ours, verb, viaDaemon),
        hostDevice: (verb) => call([join(CNI_DIR, 'host-device')], theirs, verb),
      });

      const versions = {
        shimDaemon: () => call([SHIM], ours, 'VERSION', viaDaemon),
        hostDevice: () => call([join(CNI_DIR, 'host-device')], theirs, 'VERSION'),
      };
      versions.shimDaemon();
      versions.hostDevice();
      const v = alternate(versions, VERSION_ROUNDS);
      ctx.log(`VERSION median: shim+daemon ${median(v.shimDaemon).toFixed(2)} ms, host-device ${median(v.hostDevice).toFixed(2)} ms (${VERSION_ROUNDS} alternated pairs)`);
      ctx.ratio('shim+daemon/host-device:version', median(v.shimDaemon) / median(v.hostDevice), { max: 1.0 }, roundRatios(v.shimDaemon, v.hostDevice));

      const fallback = { shim: pair([SHIM], noDaemon), oneShot: pair([process.execPath, PLUGIN], {}) };
      fallback.shim();
      fallback.oneShot();
      const f = alternate(fallback, ROUNDS);
      ctx.log(`ADD+DEL median: shim without a daemon ${median(f.shim).toFixed(1)} ms, one-shot ${median(f.oneShot).toFixed(1)} ms (${ROUNDS} alternated pairs)`);
      ctx.ratio('shim-fallback/one-shot:add+del', median(f.shim) / median(f.oneShot), { max: 1.05 }, roundRatios(f.shim, f.oneShot));

      await concurrentAdds(ctx, worldEnv, ours, socket);
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
    }
  });
}

/** The settled pair (cni-world.mjs alternateSettled) against host-device's; no kernel floor: its program does the pair
 *  in one process, back to back. */
function settledPairs(ctx, contenders) {
  const t = alternateSettled(contenders);
  const ms = (name, verb) => median(t[name][verb]).toFixed(1);
  ctx.log(
    `settled (${SETTLE_MS} ms between ADD and DEL, ${t.shimDaemon.add.length} alternated rounds), medians: shim+daemon ADD ${ms('shimDaemon', 'add')} ms, DEL ` +
      `${ms('shimDaemon', 'del')} ms; host-device ADD ${ms('hostDevice', 'add')} ms, DEL ${ms('hostDevice', 'del')} ms`,
  );
  // reported beside the back-to-back pair, whose targets stand: this is the same work in a pod's own rhythm
  ctx.ratio('shim+daemon/host-device:add+del-settled', median(t.shimDaemon.pair) / median(t.hostDevice.pair), {}, roundRatios(t.shimDaemon.pair, t.hostDevice.pair));
}

/** 16 ADDs at once through the daemon, each of its own NIC, against the same 16 one-shot; then their DELs. */
async function concurrentAdds(ctx, base, ours, socket) {
  const prefix = ours.device.slice(0, -1);
  const nics = Array.from({ length: CONCURRENT }, (_, i) => `${prefix}c${i}`);
  const confOf = (i) => JSON.stringify({ ...ours, device: nics[i], ipam: { type: 'static', addresses: [{ address: `10.124.0.${i + 2}/24` }] } });
  const envOf = (i, command, extra) => ({ ...base, ...extra, CNI_COMMAND: command, CNI_CONTAINERID: `${base.CNI_CONTAINERID}-${i}`, CNI_IFNAME: `net${i + 10}` });
  for (const n of nics) ip('link', 'add', n, 'type', 'veth', 'peer', 'name', `${n}p`);
  try {
    for (const n of nics) ip('link', 'set', `${n}p`, 'up');
    const batch = async (argv, extra) => {
      const t0 = performance.now();
      await Promise.all(nics.map((_, i) => spawnAsync(argv, envOf(i, 'ADD', extra), confOf(i))));
      const ms = performance.now() - t0;
      await Promise.all(nics.map((_, i) => spawnAsync(argv, envOf(i, 'DEL', extra), confOf(i))));
      return ms;
    };
    const daemonMs = [];
    const oneShotMs = [];
    for (let r = 0; r < 3; r++) {
      daemonMs.push(await batch([SHIM], { SRIOVCTL_SOCKET: socket }));
      oneShotMs.push(await batch([process.execPath, PLUGIN], {}));
    }
    ctx.log(`${CONCURRENT} concurrent ADDs, all succeeded: through the daemon ${median(daemonMs).toFixed(0)} ms a batch, one-shot ${median(oneShotMs).toFixed(0)} ms (median of 3 alternated)`);
    ctx.ratio(`shim+daemon/one-shot:${CONCURRENT}-concurrent-adds`, median(daemonMs) / median(oneShotMs), {}, roundRatios(daemonMs, oneShotMs));
  } finally {
    for (const n of nics) {
      try {
        ip('link', 'del', n);
      } catch {
        // gone with the pod namespace
      }
    }
  }
}
