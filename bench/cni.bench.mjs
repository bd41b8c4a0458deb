// sriovctl-cni against Debian's host-device plugin on the same kind of device (a veth lent to a scratch
// namespace) with the same `static` IPAM, ADD+DEL pairs alternated; VERSION against a bare `node -e 0`; and the
// peak RSS of one ADD. Needs root, `npm run build`, and /usr/lib/cni (scripts/ensure-system-deps.sh).
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { benchEnv, droppedStartupVariables, median, rotate } from './bench-helpers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PLUGIN = join(ROOT, 'bin', 'sriovctl-cni.js');
const BUNDLE = join(ROOT, 'dist', 'sriovctl-cni.bundle.js');
const CNI_DIR = '/usr/lib/cni';
const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS) || 15;
const VERSION_ROUNDS = Number(process.env.CNI_BENCH_VERSION_ROUNDS) || 40;

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

function elapsedMs(fn) {
  const t0 = process.hrtime.bigint();
  const r = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, r];
}

export default async function cniBench(ctx) {
  if (process.getuid?.() !== 0) throw new Error('needs root (network namespaces)');
  for (const f of [BUNDLE, join(CNI_DIR, 'host-device'), join(CNI_DIR, 'static')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing (npm run build; scripts/ensure-system-deps.sh)`);
  }
  const p = 'bc' + randomBytes(2).toString('hex');
  const pod = `${p}pod`;
  const nic = `${p}a`;
  const scratch = mkdtempSync(join(tmpdir(), 'sriovctl-cni-bench-'));
  const stateDir = join(scratch, 'state');
  const sysfsRoot = join(scratch, 'sys');
  mkdirSync(join(sysfsRoot, 'bus', 'pci', 'devices'), { recursive: true });
  ip('netns', 'add', pod);
  try {
    ip('link', 'add', nic, 'type', 'veth', 'peer', 'name', `${p}b`);
    // carrier, as a NIC in service has: without it sriovctl-cni's ADD waits up to 200 ms for one (as sriov-cni)
    ip('link', 'set', `${p}b`, 'up');
    const dropped = droppedStartupVariables();
    if (dropped.length) ctx.log(`every call runs with the CNI variables only, as kubelet's are (left out of this shell: ${dropped.join(', ')})`);
    const base = benchEnv({
      SRIOVCTL_STATE_DIR: stateDir,
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

    const call = (argv, config, command, extraArgs = []) => {
      const r = spawnSync(argv[0], [...extraArgs, ...argv.slice(1)], { env: { ...base, CNI_COMMAND: command }, input: JSON.stringify(config), encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${config.type} ${command} failed: ${r.stdout}${r.stderr}`);
      return r;
    };
    const contenders = {
      ours: () => {
        call([process.execPath, PLUGIN], ours, 'ADD');
        call([process.execPath, PLUGIN], ours, 'DEL');
      },
      theirs: () => {
        call([join(CNI_DIR, 'host-device')], theirs, 'ADD');
        call([join(CNI_DIR, 'host-device')], theirs, 'DEL');
      },
    };
    // warm up both (page cache, the IPAM version cache in the state dir)
    contenders.ours();
    contenders.theirs();
    const times = { ours: [], theirs: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of rotate(['ours', 'theirs'], r)) times[name].push(elapsedMs(contenders[name])[0]);
    }
    const [mo, mt] = [median(times.ours), median(times.theirs)];
    ctx.log(`ADD+DEL median: sriovctl-cni ${mo.toFixed(1)} ms, host-device ${mt.toFixed(1)} ms (${ROUNDS} alternated pairs)`);
    ctx.ratio('sriovctl-cni/host-device:add+del', mo / mt, { max: 4.0 });

    // VERSION against the floor of any Node program
    const vtimes = { version: [], bare: [] };
    const runs = {
      version: () => spawnSync(process.execPath, [PLUGIN], { env: benchEnv({ CNI_COMMAND: 'VERSION' }), input: '{"cniVersion":"1.1.0"}' }),
      bare: () => spawnSync(process.execPath, ['-e', '0'], { env: benchEnv(), input: '{"cniVersion":"1.1.0"}' }),
    };
    runs.version();
    runs.bare();
    for (let r = 0; r < VERSION_ROUNDS; r++) {
      for (const name of rotate(['version', 'bare'], r)) vtimes[name].push(elapsedMs(runs[name])[0]);
    }
    const [mv, mb] = [median(vtimes.version), median(vtimes.bare)];
    ctx.log(`VERSION median ${mv.toFixed(1)} ms, node -e 0 median ${mb.toFixed(1)} ms (${VERSION_ROUNDS} alternated pairs)`);
    ctx.ratio('sriovctl-cni-version/node-bare', mv / mb, { max: 1.3 });

    // peak RSS of one ADD: getrusage(RUSAGE_SELF).ru_maxrss of the plugin process, read as it exits
    const rssOut = join(scratch, 'rss');
    const preload = join(scratch, 'rss-preload.cjs');
    writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(rssOut)}, String(process.resourceUsage().maxRSS)));\n`);
    const peaks = [];
    for (let i = 0; i < 3; i++) {
      call([process.execPath, PLUGIN], ours, 'ADD', ['--require', preload]);
      peaks.push(Number(readFileSync(rssOut, 'utf8')) / 1024);
      call([process.execPath, PLUGIN], ours, 'DEL');
    }
    const peak = Math.max(...peaks);
    ctx.log(`peak RSS of an ADD: ${peak.toFixed(1)} MiB (max of ${peaks.length}; target ≤ 60 MiB)`);
    ctx.ratio('sriovctl-cni:add-peak-rss-mib', peak, { max: 60 });
  } finally {
    try {
      ip('netns', 'del', pod);
    } catch {
      // already gone
    }
    try {
      ip('link', 'del', nic);
    } catch {
      // destroyed with the namespace, or never made
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}
