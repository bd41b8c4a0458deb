// The daemon's V8 flags (src/daemon/memory-bound.ts), set at run time as the daemon sets them: under allocation
// churn with survivors (what every CNI call makes), the young generation keeps (about) its start size; without
// them, the same churn grows it many times over — so the flags are what bounds it, not the workload.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { runInNewContext } from 'node:vm';
import { boundDaemonMemory, CALLS_PER_COLLECTION, collectingEvery, DAEMON_V8_FLAGS } from '../../src/daemon/memory-bound';

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

describe('the daemon memory bound', () => {
  it('keeps the young generation near its start size under churn that grows it many times over without', () => {
    const bounded = youngGeneration(DAEMON_V8_FLAGS);
    const free = youngGeneration([]);
    expect(bounded.max).toBeLessThanOrEqual(2 * bounded.start);
    expect(free.max).toBeGreaterThanOrEqual(8 * free.start);
  });
});

describe('the daemon\'s own full collections', () => {
  /** A bound whose deferred collections run when `flush()` says, counting them. */
  function bound(every: number) {
    const deferred: (() => void)[] = [];
    let collections = 0;
    const b = collectingEvery(every, () => collections++, (run) => deferred.push(run));
    const flush = () => deferred.splice(0).forEach((run) => run());
    return { b, flush, collections: () => collections };
  }

  it('collects once every `every` calls when none is in flight, after the call that ended', () => {
    const { b, flush, collections } = bound(4);
    for (let i = 0; i < 3; i++) b.afterCall(() => 0);
    flush();
    expect(collections()).toBe(0);
    b.afterCall(() => 0);
    expect(collections()).toBe(0);
    flush();
    expect(collections()).toBe(1);
    for (let i = 0; i < 4; i++) b.afterCall(() => 0);
    flush();
    expect(collections()).toBe(2);
  });

  it('waits for the calls in flight, but not past 4× as many calls', () => {
    const { b, flush, collections } = bound(4);
    for (let i = 0; i < 15; i++) {
      b.afterCall(() => 3);
      flush();
    }
    expect(collections()).toBe(0);
    b.afterCall(() => 3);
    flush();
    expect(collections()).toBe(1);
    // one ending with none in flight after `every` more collects at once
    for (let i = 0; i < 3; i++) b.afterCall(() => 1);
    b.afterCall(() => 0);
    flush();
    expect(collections()).toBe(2);
  });

  it('collects fully in the process that bounds itself, without exposing `gc` to its code or to later contexts', async () => {
    const exposedBefore = typeof (globalThis as { gc?: unknown }).gc;
    const memory = boundDaemonMemory();
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe(exposedBefore);
    expect(runInNewContext('typeof gc')).toBe('undefined');
    const majors: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors.push(e.startTime);
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      const t0 = performance.now();
      for (let i = 0; i < CALLS_PER_COLLECTION; i++) memory.afterCall(() => 0);
      await new Promise((r) => setTimeout(r, 200));
      expect(majors.filter((t) => t >= t0).length).toBeGreaterThanOrEqual(1);
    } finally {
      observer.disconnect();
    }
  });
});
