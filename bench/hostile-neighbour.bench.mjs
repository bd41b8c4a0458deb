// A DEL whose pod namespace is gone (the runtime deleted it first), through the shim and the daemon, with a hostile
// neighbour — an unprivileged process with 300 000 entries in its own /run/netns (test/helpers/neighbour-planter.js)
// — against the same DEL with that directory out of the way, alternated: the neighbour's directory is renamed
// away for the "alone" rounds (from here, as root, through its /proc/<pid>/root). A second neighbour keeps changing
// its directory (an entry made and removed every 2 ms), so the daemon cannot skip it as unchanged: it reads it again,
// up to the bounds of one directory, once its last read is SearchBounds.oversizedRereadMs (10 s) old — once or twice
// in a run of this bench (15 s here), seen in the spread's maximum, not in the median; its rounds are a third
// contender, and "alone" has both directories away. Each DEL does search the machine (the NIC, a veth, died with its
// namespace: nothing says it is home), which is what a neighbour could stall.
// Only the DEL is timed; each round's ADD, pod namespace and NIC are set up untimed. Needs root, `npm run build` and
// /usr/lib/cni.
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

function startNeighbour(plan) {
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'unshare', '-Urmn', '--', process.execPath, PLANTER, JSON.stringify(plan)], {
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
    const neighbours = { hostile: null, changing: null };
    const killNeighbours = () => Object.values(neighbours).forEach((c) => c?.kill('SIGKILL'));
    const daemon = await (async () => {
      neighbours.hostile = await startNeighbour({ files: ENTRIES });
      neighbours.changing = await startNeighbour({ files: ENTRIES, churn: true });
      return startDaemon(socket);
    })().catch((err) => {
      killNeighbours();
      throw err;
    });
    const pause = new Int32Array(new SharedArrayBuffer(4));
    /** Each neighbour's directory there for its own rounds only ('alone': neither). */
    const only = (mode) => {
      for (const [name, child] of Object.entries(neighbours)) {
        const dir = `/proc/${child.pid}/root/run/netns`;
        const wanted = name === mode;
        if (wanted === existsSync(dir)) continue;
        child.kill(wanted ? 'SIGUSR2' : 'SIGUSR1');
        while (wanted !== existsSync(dir)) Atomics.wait(pause, 0, 0, 2);
      }
    };
    const viaDaemon = { env: { SRIOVCTL_SOCKET: socket } };
    let n = 0;
    /** One DEL of a pod whose namespace is gone, with the directory of `mode`'s neighbour there (or none); returns its ms. */
    const doomedDel = (mode) => {
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
        only(mode);
        return elapsedMs(() => call([SHIM], conf, 'DEL', { env }))[0];
      } finally {
        ipIfThere('netns', 'del', pod);
        ipIfThere('link', 'del', nic);
      }
    };
    try {
      const modes = ['hostile', 'changing', 'alone'];
      for (const mode of modes) doomedDel(mode);
      const times = { hostile: [], changing: [], alone: [] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const mode of rotate(modes, r)) times[mode].push(doomedDel(mode));
      }
      const ms = (mode) => median(times[mode]).toFixed(1);
      ctx.log(
        `DEL of a pod whose namespace is gone, through the daemon: ${ms('hostile')} ms with a neighbour's ${ENTRIES}-entry /run/netns, ` +
          `${ms('changing')} ms with one that keeps changing it, ${ms('alone')} ms with neither (${ROUNDS} alternated rounds)`,
      );
      ctx.ratio('shim+daemon:del-with-hostile-neighbour/alone', median(times.hostile) / median(times.alone), { max: 1.5 }, roundRatios(times.hostile, times.alone));
      // no target: the bounds of one directory (4096 entries, 250 ms), every 10 s, are what such a neighbour can cost
      ctx.ratio('shim+daemon:del-with-changing-neighbour/alone', median(times.changing) / median(times.alone), {}, roundRatios(times.changing, times.alone));
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
      killNeighbours();
    }
  });
}
