// .ci/run's exit traps run under the script's own `set -euo pipefail`: a command in them that fails (killing a
// background job already waited for) turns a green run into exit 1. Each trap is run here as the script runs it at
// its end, after every job it names has been reaped.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CI_RUN = join(__dirname, '..', '..', '.ci', 'run');

/** The `trap '…' EXIT` commands of a bash script, and the variables they read. */
function exitTraps(script: string): { body: string; vars: string[] }[] {
  return [...script.matchAll(/^trap '([^']*)' EXIT$/gm)].map((m) => ({
    body: m[1],
    vars: [...new Set([...m[1].matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((v) => v[1]))],
  }));
}

describe('.ci/run', () => {
  it('parses as bash', () => {
    const r = spawnSync('bash', ['-n', CI_RUN], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it('keeps a passing run passing through its exit trap, with its background job already reaped', () => {
    const traps = exitTraps(readFileSync(CI_RUN, 'utf8'));
    expect(traps.length).toBeGreaterThan(0);
    for (const { body, vars } of traps) {
      // every variable is the pid of a job that has ended and been waited for, or a file that is already gone
      const setup = vars.map((v) => `true & ${v}=$!; wait "$${v}"`).join('; ');
      const script = `set -euo pipefail; ${setup}; trap '${body}' EXIT; true`;
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      expect(r.status, `${body}\n${r.stderr}`).toBe(0);
    }
  });

  it('the check above fails on a trap that fails', () => {
    const script = `set -euo pipefail; true & p=$!; wait "$p"; trap 'kill "$p" 2>/dev/null' EXIT; true`;
    expect(spawnSync('bash', ['-c', script]).status).toBe(1);
  });
});
