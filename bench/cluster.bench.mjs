// `cluster up` + `cluster down` on the local provider with 3 simulated NICs (3 agents, 4 VFs each), run as the
// real command (Node's start-up included), against the same work done the shell way: one `ip` command per step,
// as kubevirtci's providers do (without their fixed 3 s sleep per node). Alternated, medians over the rounds.
// Prints `ratio cluster/ip-script:up+down <n>` (target ≤ 1.5), the SR-IOV stage per node (target ≤ 0.3 s) and the
// time from `down` to each NIC being usable at home again. Then `cluster up` at scale: one agent with 64 VFs on its PF
// against the same with 4, as cost per VF (the same with none taken off: the nodes, the PF's lend), ratio
// `cluster:up-per-vf-64/4` (target ≤ 1.2).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv, droppedStartupVariables, median, rotate, roundRatios } from './bench-helpers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRIOVCTL = join(ROOT, 'bin', 'sriovctl.js');
const AGENTS = 3;
const VFS = 4;
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS || 7);
const SCALE_ROUNDS = Number(process.env.BENCH_CLUSTER_SCALE_ROUNDS || 5);
/** VFs per PF of the scale comparison: many against few, and none for the fixed cost. */
const SCALE_VFS = { many: 64, few: 4, none: 0 };

/** Runs a command; resolves with its stdout and wall time from spawn to exit (ms). */
function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const spawnedAt = Date.now();
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.trim() || out.trim()}`));
      else resolve({ out, ms, spawnedAt });
    });
  });
}

/** The shell way, step for step the same work as the local provider with simulated NICs. */
function ipScript(prefix) {
  const nodes = ['server-0', ...Array.from({ length: AGENTS }, (_, i) => `agent-${i}`)];
  const up = [];
  const down = [];
  for (const n of nodes) up.push(`ip netns add ${prefix}-${n}`, `ip -n ${prefix}-${n} link set lo up`);
  for (let i = 0; i < AGENTS; i++) {
    const ns = `${prefix}-agent-${i}`;
    const pf = `${prefix}p${i}`;
    up.push(
      `ip link add ${pf} address 02:bb:00:00:0${i}:01 type veth peer name ${prefix}w${i}`,
      `ip link set ${pf} netns ${ns}`,
      `ip -n ${ns} link set ${pf} up`,
    );
    for (let v = 0; v < VFS; v++) up.push(`ip -n ${ns} link add ${pf}v${v} address 02:bb:00:00:0${i}:1${v} type veth peer name ${pf}v${v}p`);
    for (let v = 0; v < VFS; v++) down.push(`ip -n ${ns} link del ${pf}v${v}`);
    down.push(`ip -n ${ns} link set ${pf} down`, `ip -n ${ns} link set ${pf} netns 1`);
  }
  for (const n of [...nodes].reverse()) down.push(`ip netns del ${prefix}-${n}`);
  for (let i = 0; i < AGENTS; i++) down.push(`ip link del ${prefix}p${i}`);
  return { up: ['set -e', ...up].join('\n'), down: ['set -e', ...down].join('\n') };
}

export default async function clusterBench(ctx) {
  if (process.getuid?.() !== 0) throw new Error('the cluster bench needs root (network namespaces)');
  const stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-bench-cluster-'));
  const env = benchEnv({ SRIOVCTL_STATE_DIR: stateDir });
  const dropped = droppedStartupVariables();
  if (dropped.length) ctx.log(`both contenders run with PATH and SRIOVCTL_STATE_DIR only (left out of this shell: ${dropped.join(', ')})`);
  const tag = randomBytes(2).toString('hex');
  const name = `bench-${tag}`;
  const script = ipScript(`bs${tag}`);
  const ours = { up: [], down: [], total: [] };
  const shell = { up: [], down: [], total: [] };
  const stages = [];
  const homes = Array.from({ length: AGENTS }, () => []);

  const contenders = [
    async () => {
      const up = await run(process.execPath, [SRIOVCTL, 'cluster', 'up', '--name', name, '--simulate', '--agents', String(AGENTS), '--vfs', String(VFS), '--json'], env);
      const down = await run(process.execPath, [SRIOVCTL, 'cluster', 'down', '--name', name, '--json'], env);
      const upSummary = JSON.parse(up.out);
      const downSummary = JSON.parse(down.out);
      if (!upSummary.ok || !downSummary.ok) throw new Error(`cluster up/down did not succeed: ${up.out} ${down.out}`);
      for (const n of upSummary.nodes) if (n.sriovStageMs !== null) stages.push(n.sriovStageMs);
      // the PFs: the VFs given back with them are listed too (removedWithVfs)
      downSummary.nics.filter((n) => !n.removedWithVfs).forEach((n, i) => homes[i].push(Date.parse(n.homeAt) - down.spawnedAt));
      ours.up.push(up.ms);
      ours.down.push(down.ms);
      ours.total.push(up.ms + down.ms);
    },
    async () => {
      const up = await run('sh', ['-c', script.up], env);
      const down = await run('sh', ['-c', script.down], env);
      shell.up.push(up.ms);
      shell.down.push(down.ms);
      shell.total.push(up.ms + down.ms);
    },
  ];

  try {
    // one warm-up of each (page cache, module compile cache), not counted
    await run(process.execPath, [SRIOVCTL, 'cluster', 'up', '--name', name, '--simulate', '--agents', String(AGENTS), '--vfs', String(VFS), '-q'], env);
    await run(process.execPath, [SRIOVCTL, 'cluster', 'down', '--name', name, '-q'], env);
    await run('sh', ['-c', `${script.up}\n${script.down.replace('set -e', '')}`], env);
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of rotate(contenders, round)) await c();
    }
    await upAtScale(ctx, env, `${name}s`);
  } finally {
    await run(process.execPath, [SRIOVCTL, 'cluster', 'down', '--name', name, '-q'], env).catch(() => undefined);
    await run('sh', ['-c', script.down.replace('set -e', '')], env).catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }

  const ms = (v) => `${Math.round(v)} ms`;
  ctx.log(`${ROUNDS} rounds, ${AGENTS} agents × ${VFS} VFs; medians: sriovctl up ${ms(median(ours.up))} + down ${ms(median(ours.down))}; ip script up ${ms(median(shell.up))} + down ${ms(median(shell.down))}`);
  ctx.ratio('cluster/ip-script:up+down', median(ours.total) / median(shell.total), { max: 1.5 }, roundRatios(ours.total, shell.total));
  const stage = median(stages) / 1000;
  ctx.log(`SR-IOV stage per node (lend PF, ${VFS} VFs, read back): median ${stage.toFixed(3)} s, max ${(Math.max(...stages) / 1000).toFixed(3)} s (target ≤ 0.3 s: ${stage <= 0.3 ? 'met' : 'MISSED'})`);
  ctx.log(`from \`cluster down\` (process start) to each NIC usable at home: ${homes.map((h, i) => `NIC ${i + 1} ${ms(median(h))}`).join(', ')}`);
}

/** `cluster up` (then `down`) of one agent with SCALE_VFS VFs, alternated: the cost per VF of many against few. */
async function upAtScale(ctx, env, name) {
  const sizes = Object.keys(SCALE_VFS);
  const up = Object.fromEntries(sizes.map((k) => [k, []]));
  const stage = Object.fromEntries(sizes.map((k) => [k, []]));
  const once = async (k) => {
    const r = await run(process.execPath, [SRIOVCTL, 'cluster', 'up', '--name', name, '--simulate', '--agents', '1', '--vfs', String(SCALE_VFS[k]), '--json'], env);
    await run(process.execPath, [SRIOVCTL, 'cluster', 'down', '--name', name, '-q'], env);
    const summary = JSON.parse(r.out);
    const agent = summary.nodes.find((n) => n.sriovStageMs !== null);
    if (!summary.ok || agent?.vfs?.ready !== SCALE_VFS[k]) throw new Error(`cluster up --vfs ${SCALE_VFS[k]} did not make its VFs: ${r.out}`);
    return { ms: r.ms, stageMs: agent.sriovStageMs };
  };
  try {
    for (const k of sizes) await once(k);
    for (let round = 0; round < SCALE_ROUNDS; round++) {
      for (const k of rotate(sizes, round)) {
        const r = await once(k);
        up[k].push(r.ms);
        stage[k].push(r.stageMs);
      }
    }
  } finally {
    await run(process.execPath, [SRIOVCTL, 'cluster', 'down', '--name', name, '-q'], env).catch(() => undefined);
  }
  const perVf = (t, k) => t[k].map((v, i) => (v - t.none[i]) / SCALE_VFS[k]);
  const [upMany, upFew] = [perVf(up, 'many'), perVf(up, 'few')];
  const [stMany, stFew] = [perVf(stage, 'many'), perVf(stage, 'few')];
  const ms = (v) => `${v.toFixed(1)} ms`;
  ctx.log(
    `cluster up, 1 agent, ${SCALE_ROUNDS} alternated rounds (medians): ${SCALE_VFS.many} VFs ${ms(median(up.many))}, ${SCALE_VFS.few} ${ms(median(up.few))}, none ${ms(median(up.none))}; ` +
      `per VF ${ms(median(upMany))} / ${ms(median(upFew))}; SR-IOV stage per VF ${ms(median(stMany))} / ${ms(median(stFew))}`,
  );
  ctx.ratio(`cluster:up-per-vf-${SCALE_VFS.many}/${SCALE_VFS.few}`, median(upMany) / median(upFew), { max: 1.2 }, roundRatios(upMany, upFew));
  ctx.ratio(`cluster:sriov-stage-per-vf-${SCALE_VFS.many}/${SCALE_VFS.few}`, median(stMany) / median(stFew), {}, roundRatios(stMany, stFew));
}
