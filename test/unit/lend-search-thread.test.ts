// The daemon's namespace searches run on a worker thread started from the worker's bundle as text, as in the
// packaged executable, where no script file lies beside the code (here, under vitest, none does either: the
// worker's module is TypeScript only). Without it, searchOffThread had no worker and every search stayed on the
// daemon's thread.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { searchOffThread, searchOnWorkerThread, stopSearchThread } from '../../src/lend/namespace-search-thread';
import { SearchBudget } from '../../src/lend/namespace-search';
import { statNetnsId } from '../../src/net/netns-id';

/** The worker's bundle, built as scripts/package/sea.mjs builds the one it embeds. */
function workerBundle(): string {
  const out = buildSync({ entryPoints: [join(__dirname, '..', '..', 'src', 'lend', 'namespace-search-worker.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs', write: false, logLevel: 'silent' });
  return out.outputFiles[0].text;
}

let pauseDir: string | null = null;
afterEach(async () => {
  await stopSearchThread();
  if (pauseDir) rmSync(pauseDir, { recursive: true, force: true });
  pauseDir = null;
});

describe('the search worker run from its text', () => {
  it('searches off this thread: held at its pause point while this thread goes on, then it answers what it found', async () => {
    pauseDir = mkdtempSync(join(tmpdir(), 'sriovctl-search-thread-'));
    const own = statNetnsId('/proc/self/ns/net')!;
    searchOnWorkerThread(workerBundle());
    const pending = searchOffThread({ id: own, path: null, pid: null, initial: false }, new SearchBudget(), { point: 'namespace-search', dir: pauseDir, subject: '' });
    let settled = false;
    void pending.then(() => (settled = true));
    // this thread's timers run while the worker is held (a hang guard, not a measurement)
    for (let i = 0; i < 600 && !existsSync(join(pauseDir, 'reached')); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(pauseDir, 'reached'))).toBe(true);
    expect(settled).toBe(false);
    writeFileSync(join(pauseDir, 'release'), '');
    const found = await pending;
    expect(found).toBeTruthy();
    expect(statNetnsId(found!.hostPath)).toEqual(own);
  });
});
