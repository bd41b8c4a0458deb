// A DEL whose pod namespace is gone (the runtime deleted it first), through the shim and the daemon, with a hostile
// neighbour — an unprivileged process with 300 000 entries in its own /run/netns (test/helpers/neighbour-planter.js)
// — against the same DEL with that directory out of the way, alternated: the neighbour's directory is renamed
// away for the "alone" rounds (from here, as root, through its /proc/<pid>/root). Only the DEL is timed; each
// round's ADD, pod namespace and NIC are set up untimed. Needs root, `npm run build` and /usr/lib/cni.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, roundRatios, rotate } from './bench-helpers.mjs';
import { elapsedMs, ipIfThere, withCniWorld } from './cni-world.mjs';
import { startDaemon } from './daemon-process.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHIM = join(ROOT, 'build', 'Release', 'sriovctl-cni');
const PLANTER = join(ROOT, 'test', 'helpers', 'neighbour-planter.js');
const ROUNDS = Number(process.env.HOSTILE_BENCH_ROUNDS) || 41;
const ENTRIES = 300_000;
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

function startNeighbour() {
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'unshare', '-Urmn', '--', process.execPath, PLANTER, JSON.stringify({ files: ENTRIES })], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: '/',
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`the neighbour exited (${code}) before planting`)));
  });
}

export default async function hostileNeighbourBench(ctx) {
  if (!existsSync(SHIM)) throw new Error(`${SHIM} is missing (npm ci / node-gyp rebuild)`);
  await withCniWorld(ctx, async ({ scratch, ours, call }) => {
    mkdirSync(join(scratch, 'run'), { mode: 0o700 });
    const socket = join(scratch, 'run', 'cni.sock');
    const neighbour = await startNeighbour();
    const daemon = await startDaemon(socket).catch((err) => {
      neighbour.kill('SIGKILL');
      throw err;
    });
    const dir = `/proc/${neighbour.pid}/root/run/netns`;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const viaDaemon = { env: { SRIOVCTL_SOCKET: socket } };
    let n = 0;
    /** One DEL of a pod whose namespace is gone, with the neighbour's directory there or not; returns its ms. */
    const doomedDel = (withNeighbour) => {
      const tag = `${ours.name.slice(6)}h${n++}`;
      const pod = `${tag}p`;
      const nic = `${tag}a`;
      ip('netns', 'add', pod);
      try {
        ip('link', 'add', nic, 'type', 'veth', 'peer', 'name', `${tag}b`);
        ip('link', 'set', `${tag}b`, 'up');
        const conf = { ...ours, device: nic };
        const env = { ...viaDaemon.env, CNI_NETNS: `/var/run/netns/${pod}`, CNI_CONTAINERID: `bench-${tag}` };
        call([SHIM], conf, 'ADD', { env });
        ip('netns', 'del', pod); // the veth dies with it
        if (withNeighbour !== existsSync(dir)) {
          neighbour.kill(withNeighbour ? 'SIGUSR2' : 'SIGUSR1');
          while (withNeighbour !== existsSync(dir)) Atomics.wait(pause, 0, 0, 2);
        }
        return elapsedMs(() => call([SHIM], conf, 'DEL', { env }))[0];
      } finally {
        ipIfThere('netns', 'del', pod);
        ipIfThere('link', 'del', nic);
      }
    };
    try {
      doomedDel(true);
      doomedDel(false);
      const times = { hostile: [], alone: [] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const name of rotate(['hostile', 'alone'], r)) times[name].push(doomedDel(name === 'hostile'));
      }
      ctx.log(`DEL of a pod whose namespace is gone, through the daemon: ${median(times.hostile).toFixed(1)} ms with a neighbour's ${ENTRIES}-entry /run/netns, ${median(times.alone).toFixed(1)} ms without (${ROUNDS} alternated pairs)`);
      ctx.ratio('shim+daemon:del-with-hostile-neighbour/alone', median(times.hostile) / median(times.alone), { max: 1.5 }, roundRatios(times.hostile, times.alone));
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
      neighbour.kill('SIGKILL');
    }
  });
}
