// docs/configuration.md is the list of every variable sriovctl reads: each one the TypeScript reads from an
// environment (`env.SRIOVCTL_X`, `env['SRIOVCTL_X']`) or the native shim asks getenv (envInt) for has a row in its table, and
// the table names none that nothing reads (build-time constants such as SRIOVCTL_VERSION are not variables).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p, ext) : ext.test(name) ? [p] : [];
  });
}

function variablesRead(): string[] {
  const found = new Set<string>();
  for (const f of filesUnder(join(ROOT, 'src'), /\.ts$/)) {
    for (const m of readFileSync(f, 'utf8').matchAll(/env(?:\.|\[')(SRIOVCTL_[A-Z0-9_]+)/g)) found.add(m[1]);
  }
  for (const f of filesUnder(join(ROOT, 'native'), /\.(c|cc|h)$/)) {
    for (const m of readFileSync(f, 'utf8').matchAll(/(?:getenv|envInt)\("(SRIOVCTL_[A-Z0-9_]+)"/g)) found.add(m[1]);
  }
  return [...found].sort();
}

/** The variables named in the first column of the table's rows. */
function variablesDocumented(): string[] {
  const text = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1].matchAll(/`(SRIOVCTL_[A-Z0-9_]+)`/g)].map((m) => m[1]))
    .sort();
}

describe('docs/configuration.md', () => {
  it('has a row for every SRIOVCTL_ variable the code reads, and none for one it does not', () => {
    const read = variablesRead();
    // the scan finds what it should: the front doors' own, and the shim's
    expect(read).toEqual(expect.arrayContaining(['SRIOVCTL_STATE_DIR', 'SRIOVCTL_SOCKET', 'SRIOVCTL_DAEMON_WAIT_MS']));
    expect(variablesDocumented()).toEqual(read);
  });
});
