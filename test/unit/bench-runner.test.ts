// The bench runner (bench/run.mjs) on stand-in benches: a ratio line and its spread line, targets judged on the
// median, the summary's classes, and the exit status — 0 whatever the targets, 1 when a measurement could not be
// made, 3 under --strict when a median missed its target.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const RUNNER = join(__dirname, '..', '..', 'bench', 'run.mjs');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-bench-runner-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes one stand-in bench whose body is `body` (ctx in scope). */
const bench = (name: string, body: string) => writeFileSync(join(dir, `${name}.bench.mjs`), `export default async (ctx) => {\n${body}\n};\n`);
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [RUNNER, ...args], { env: { PATH: process.env.PATH, SRIOVCTL_BENCH_DIR: dir }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
};

describe('npm run bench', () => {
  it('prints the median as the ratio line and the per-round min/max on the line after it', () => {
    bench('a', `ctx.ratio('x/y:op', 1.1, { max: 1.2 }, [1.05, 1.1, 1.15])`);
    const r = run();
    const lines = r.out.split('\n');
    const i = lines.indexOf('ratio x/y:op 1.1');
    expect(i).toBeGreaterThanOrEqual(0);
    expect(lines[i + 1]).toBe('# a.bench.mjs: x/y:op spread 1.05..1.15 over 3 rounds; target ≤ 1.2: met');
    expect(r.status).toBe(0);
  });

  it('keeps the three-argument call: no spread, the target still judged', () => {
    bench('a', `ctx.ratio('x/y:op', 25, { min: 20 })`);
    const r = run('--strict');
    expect(r.out).toContain('ratio x/y:op 25\n# a.bench.mjs: x/y:op no per-round ratios given; target ≥ 20: met\n');
    expect(r.out).toContain('# summary: 1 targets met, 0 missed, 0 within the spread; 0 ratios without a target');
    expect(r.status).toBe(0);
  });

  it('exits 0 on a missed target, and --strict exits 3 on it', () => {
    bench('a', `ctx.ratio('slow', 13, { min: 20 }, [12, 13, 15]); ctx.ratio('fast', 0.5, { max: 1.2 }, [0.4, 0.6])`);
    const r = run();
    expect(r.status).toBe(0);
    expect(r.out).toContain('# a.bench.mjs: slow spread 12..15 over 3 rounds; target ≥ 20: missed\n');
    expect(r.out).toContain('# summary: 1 targets met, 1 missed, 0 within the spread');
    expect(r.out).toContain('#   missed: slow 13, target ≥ 20 (spread 12..15)');
    const strict = run('--strict');
    expect(strict.status).toBe(3);
    expect(strict.err).toContain('--strict: 1 target(s) missed by the median');
  });

  it('says when the target lies within the spread, judging on the median either way', () => {
    bench('a', `ctx.ratio('met', 21, { min: 20 }, [19.6, 21, 25.4]); ctx.ratio('missed', 19.6, { min: 20 }, [13, 19.6, 25.4])`);
    const r = run();
    expect(r.status).toBe(0);
    expect(r.out).toContain('met spread 19.6..25.4 over 3 rounds; target ≥ 20: met (target within the spread)');
    expect(r.out).toContain('missed spread 13..25.4 over 3 rounds; target ≥ 20: missed (target within the spread)');
    expect(r.out).toContain('# summary: 0 targets met, 0 missed, 2 within the spread');
    expect(r.out).toContain('#   within the spread, median met: met 21, target ≥ 20 (spread 19.6..25.4)');
    expect(r.out).toContain('#   within the spread, median missed: missed 19.6, target ≥ 20 (spread 13..25.4)');
    // the median decides: a miss within the spread is still a miss for a CI gate
    expect(run('--strict').status).toBe(3);
  });

  it('prints a ratio without a target with its spread and no verdict', () => {
    bench('a', `ctx.ratio('ip-exec/addon:move', 1.26, {}, [1.1, 1.4])`);
    const r = run('--strict');
    expect(r.out).toContain('# a.bench.mjs: ip-exec/addon:move spread 1.1..1.4 over 2 rounds; no target\n');
    expect(r.out).toContain('1 ratios without a target');
    expect(r.status).toBe(0);
  });

  it('exits 1 when a bench could not measure, and still reports the others', () => {
    bench('a', `throw new Error('no netns here')`);
    bench('b', `ctx.ratio('ok', 1, { max: 2 }, [1, 1])`);
    const r = run();
    expect(r.status).toBe(1);
    expect(r.err).toContain('# a.bench.mjs: could not measure: Error: no netns here');
    expect(r.out).toContain('ratio ok 1\n');
  });

  it('a ratio that is not a number is a measurement that could not be made', () => {
    bench('a', `ctx.ratio('nan', 0 / 0, { max: 2 }, [1, 2])`);
    const r = run();
    expect(r.status).toBe(1);
    expect(r.out).toContain('nan spread 1..2 over 2 rounds; NOT MEASURED');
  });

  it('refuses malformed per-round ratios as a failed bench, not a silent line', () => {
    bench('a', `ctx.ratio('x', 1, { max: 2 }, [])`);
    const r = run();
    expect(r.status).toBe(1);
    expect(r.err).toContain('ratio x: rounds must be a non-empty array of per-round ratios');
  });

  it('runs only the files named, and a word that matches none is an error', () => {
    bench('net', `ctx.ratio('n', 1)`);
    bench('cni', `ctx.ratio('c', 1)`);
    const r = run('cni');
    expect(r.out).toContain('ratio c 1');
    expect(r.out).not.toContain('ratio n 1');
    expect(run('nothing').status).toBe(1);
  });

  it('an unknown option is a usage error', () => {
    const r = run('--strcit');
    expect(r.status).toBe(2);
    expect(r.err).toContain('unknown option --strcit');
  });
});
