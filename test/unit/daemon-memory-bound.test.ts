// The daemon's V8 flags (src/daemon/memory-bound.ts), set at run time as the daemon sets them: under allocation
// churn with survivors (what every CNI call makes), the young generation keeps (about) its start size; without
// them, the same churn grows it many times over — so the flags are what bounds it, not the workload. In a pool
// worker the flags alone do not hold it; its resource limits do.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DAEMON_V8_FLAGS, DAEMON_WORKER_RESOURCE_LIMITS } from '../../src/daemon/memory-bound';

const CHURN = `
const v8 = require('node:v8');
for (const f of JSON.parse(process.argv[1])) v8.setFlagsFromString(f);
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const start = young();
let max = start;
let keep = [];
for (let i = 0; i < 400000; i++) {
  keep.push({ i, s: 'x' + i, a: [i] });
  if (keep.length > 20000) keep = keep.slice(10000);
  if (i % 1000 === 0) max = Math.max(max, young());
}
process.stdout.write(JSON.stringify({ start, max }));
`;

function youngGeneration(flags: readonly string[]): { start: number; max: number } {
  const r = spawnSync(process.execPath, ['-e', CHURN, JSON.stringify(flags)], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { start: number; max: number };
}

/** The churn in a worker thread of a process with the daemon's flags set, the worker started with `limits`. */
const IN_WORKER = `
const v8 = require('node:v8');
const [flags, limits, churn] = JSON.parse(process.argv[1]);
for (const f of flags) v8.setFlagsFromString(f);
const { Worker } = require('node:worker_threads');
// the flags are the process's, set above: the worker sets none of its own
const inWorker = churn.replace('JSON.parse(process.argv[1])', '[]').replace('process.stdout.write', 'require("node:worker_threads").parentPort.postMessage');
const w = new Worker(inWorker, { eval: true, resourceLimits: limits ?? undefined });
w.on('message', (m) => process.stdout.write(m));
`;

function youngGenerationInWorker(limits: object | null): { start: number; max: number } {
  const r = spawnSync(process.execPath, ['-e', IN_WORKER, JSON.stringify([DAEMON_V8_FLAGS, limits, CHURN])], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { start: number; max: number };
}

describe('the daemon memory bound', () => {
  it('keeps the young generation near its start size under churn that grows it many times over without', () => {
    const bounded = youngGeneration(DAEMON_V8_FLAGS);
    const free = youngGeneration([]);
    expect(bounded.max).toBeLessThanOrEqual(2 * bounded.start);
    expect(free.max).toBeGreaterThanOrEqual(8 * free.start);
  });

  it('keeps a pool worker\'s young generation small with its resource limits (the flags alone do not)', () => {
    const bounded = youngGenerationInWorker(DAEMON_WORKER_RESOURCE_LIMITS);
    const flagsOnly = youngGenerationInWorker(null);
    expect(bounded.max).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(flagsOnly.max).toBeGreaterThanOrEqual(8 * 1024 * 1024);
  });
});
