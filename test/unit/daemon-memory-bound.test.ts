// The daemon's V8 flags (src/daemon/memory-bound.ts), set at run time as the daemon sets them: under allocation
// churn with survivors (what every CNI call makes), the young generation keeps (about) its start size; without
// them, the same churn grows it many times over — so the flags are what bounds it, not the workload.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DAEMON_V8_FLAGS } from '../../src/daemon/memory-bound';

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
