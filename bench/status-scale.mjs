// `status` at node scale, for bench/ledger-scale.bench.mjs: the work `sriovctl status` does per record (read the
// ledger, tell where each lent NIC is now) with 500 real lends against the same with 10, as cost per record
// (ratio `status:per-record-500/10`, target ≤ 1.2). Each lend is a veth moved into a namespace of its own, as each
// pod has its own; the fixed cost (a session, the ledger's directory) is measured with no record and taken off.
// In-process (the engine as the CLI runs it, without Node's start-up, whose noise is larger than 10 records' work);
// the real command's wall times are logged beside. Needs root and `npm run build`.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv, median, rotate, roundRatios } from './bench-helpers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { openSession } = require(join(ROOT, 'dist', 'lend', 'index.js'));
const { loadConfig } = require(join(ROOT, 'dist', 'config.js'));
const CLI = join(ROOT, 'bin', 'sriovctl.js');
const ROUNDS = Number(process.env.STATUS_BENCH_ROUNDS) || 21;
const SIZES = { many: 500, few: 10, none: 0 };

const ipBatch = (lines) => execFileSync('ip', ['-batch', '-'], { input: `${lines.join('\n')}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
const ipBatchForce = (lines) => spawnSync('ip', ['-force', '-batch', '-'], { input: `${lines.join('\n')}\n`, stdio: ['pipe', 'ignore', 'ignore'] });

export async function statusScale(ctx) {
  const tag = `ls${randomBytes(2).toString('hex')}`;
  const scratch = mkdtempSync(join(tmpdir(), 'sriovctl-status-bench-'));
  const count = SIZES.many + SIZES.few;
  const ns = (i) => `${tag}n${i}`;
  const nic = (i) => `${tag}a${i}`;
  const made = [];
  try {
    // one namespace and one veth per lend; the peers stay home
    for (let i = 0; i < count; i += 100) {
      const batch = [];
      for (let j = i; j < Math.min(count, i + 100); j++) batch.push(`netns add ${ns(j)}`, `link add ${nic(j)} type veth peer name ${tag}b${j}`);
      ipBatch(batch);
      for (let j = i; j < Math.min(count, i + 100); j++) made.push(j);
    }
    const stateDirs = Object.fromEntries(Object.keys(SIZES).map((k) => [k, join(scratch, k)]));
    let next = 0;
    for (const [k, n] of Object.entries(SIZES)) {
      mkdirSync(stateDirs[k], { mode: 0o700 });
      chmodSync(stateDirs[k], 0o700);
      const session = openSession(loadConfig({ ...benchEnv(), SRIOVCTL_STATE_DIR: stateDirs[k] }));
      try {
        for (let i = 0; i < n; i++, next++) {
          session.lend({ nic: { name: nic(next) }, target: { path: `/var/run/netns/${ns(next)}` }, owner: { kind: 'attach', target: `bench:${ns(next)}` }, name: 'net1' });
        }
      } finally {
        session.close();
      }
    }
    // the engine's part of `status`, as the CLI's status command runs it: the ledger read, each NIC located
    const statusWork = (dir) => {
      const t0 = process.hrtime.bigint();
      const session = openSession(loadConfig({ ...benchEnv(), SRIOVCTL_STATE_DIR: dir }), { keepHandles: true });
      try {
        const { records } = session.status();
        for (const r of records) if (session.whereIs(r).place === 'unknown') throw new Error(`status cannot tell where ${r.key} is`);
      } finally {
        session.close();
      }
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const cli = (dir) => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, [CLI, 'status', '--json'], { env: benchEnv({ SRIOVCTL_STATE_DIR: dir }), encoding: 'utf8', maxBuffer: 64 << 20 });
      if (r.status !== 0) throw new Error(`sriovctl status failed: ${r.stderr}`);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const names = Object.keys(SIZES);
    for (const k of names) statusWork(stateDirs[k]), cli(stateDirs[k]);
    const work = Object.fromEntries(names.map((k) => [k, []]));
    const wall = Object.fromEntries(names.map((k) => [k, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of rotate(names, r)) work[k].push(statusWork(stateDirs[k]));
      for (const k of rotate(names, r)) wall[k].push(cli(stateDirs[k]));
    }
    const perRecord = (t, k) => t[k].map((ms, i) => (ms - t.none[i]) / SIZES[k]);
    const [pm, pf] = [perRecord(work, 'many'), perRecord(work, 'few')];
    const ms = (t, k) => median(t[k]).toFixed(1);
    ctx.log(`status, engine part (${ROUNDS} alternated rounds, medians): ${SIZES.many} records ${ms(work, 'many')} ms, ${SIZES.few} ${ms(work, 'few')} ms, none ${ms(work, 'none')} ms; per record ${median(pm).toFixed(3)} / ${median(pf).toFixed(3)} ms`);
    ctx.log(`sriovctl status --json, the whole command (medians): ${SIZES.many} records ${ms(wall, 'many')} ms, ${SIZES.few} ${ms(wall, 'few')} ms, none ${ms(wall, 'none')} ms`);
    ctx.ratio(`status:per-record-${SIZES.many}/${SIZES.few}`, median(pm) / median(pf), { max: 1.2 }, roundRatios(pm, pf));
  } finally {
    // a veth dies with the namespace it is in: the lent ends with theirs, the peers (home) by name
    ipBatchForce(made.flatMap((i) => [`netns del ${ns(i)}`, `link del ${tag}b${i}`]));
    rmSync(scratch, { recursive: true, force: true });
  }
}
