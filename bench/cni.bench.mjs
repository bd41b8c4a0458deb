// sriovctl-cni against Debian's host-device plugin on the same kind of device (a veth lent to a scratch
// namespace) with the same `static` IPAM, ADD+DEL pairs alternated; VERSION against a bare `node -e 0`; and the
// peak RSS of one ADD. Needs root, `npm run build`, and /usr/lib/cni (scripts/ensure-system-deps.sh).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv, median, roundRatios } from './bench-helpers.mjs';
import { alternate, withCniWorld } from './cni-world.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PLUGIN = join(ROOT, 'bin', 'sriovctl-cni.js');
const BUNDLE = join(ROOT, 'dist', 'sriovctl-cni.bundle.js');
const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS) || 15;
const VERSION_ROUNDS = Number(process.env.CNI_BENCH_VERSION_ROUNDS) || 40;

export default async function cniBench(ctx) {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing (npm run build)`);
  await withCniWorld(ctx, ({ scratch, ours, call, hostDevice }) => {
    const contenders = {
      ours: () => {
        call([process.execPath, PLUGIN], ours, 'ADD');
        call([process.execPath, PLUGIN], ours, 'DEL');
      },
      theirs: hostDevice,
    };
    // warm up both (page cache, the IPAM version cache in the state dir)
    contenders.ours();
    contenders.theirs();
    const times = alternate(contenders, ROUNDS);
    const [mo, mt] = [median(times.ours), median(times.theirs)];
    ctx.log(`ADD+DEL median: sriovctl-cni ${mo.toFixed(1)} ms, host-device ${mt.toFixed(1)} ms (${ROUNDS} alternated pairs)`);
    ctx.ratio('sriovctl-cni/host-device:add+del', mo / mt, { max: 4.0 }, roundRatios(times.ours, times.theirs));

    // VERSION against the floor of any Node program
    const runs = {
      version: () => spawnSync(process.execPath, [PLUGIN], { env: benchEnv({ CNI_COMMAND: 'VERSION' }), input: '{"cniVersion":"1.1.0"}' }),
      bare: () => spawnSync(process.execPath, ['-e', '0'], { env: benchEnv(), input: '{"cniVersion":"1.1.0"}' }),
    };
    runs.version();
    runs.bare();
    const vtimes = alternate(runs, VERSION_ROUNDS);
    const [mv, mb] = [median(vtimes.version), median(vtimes.bare)];
    ctx.log(`VERSION median ${mv.toFixed(1)} ms, node -e 0 median ${mb.toFixed(1)} ms (${VERSION_ROUNDS} alternated pairs)`);
    ctx.ratio('sriovctl-cni-version/node-bare', mv / mb, { max: 1.3 }, roundRatios(vtimes.version, vtimes.bare));

    // peak RSS of one ADD: getrusage(RUSAGE_SELF).ru_maxrss of the plugin process, read as it exits
    const rssOut = join(scratch, 'rss');
    const preload = join(scratch, 'rss-preload.cjs');
    writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(rssOut)}, String(process.resourceUsage().maxRSS)));\n`);
    const peaks = [];
    for (let i = 0; i < 3; i++) {
      call([process.execPath, PLUGIN], ours, 'ADD', { extraArgs: ['--require', preload] });
      peaks.push(Number(readFileSync(rssOut, 'utf8')) / 1024);
      call([process.execPath, PLUGIN], ours, 'DEL');
    }
    const peak = Math.max(...peaks);
    ctx.log(`peak RSS of an ADD: ${peak.toFixed(1)} MiB (max of ${peaks.length}; target ≤ 60 MiB)`);
    ctx.ratio('sriovctl-cni:add-peak-rss-mib', peak, { max: 60 }, peaks);
  });
}
