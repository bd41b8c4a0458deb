// A bundle file's code cache is named by the file's identity (src/package/code-cache.ts fileKey): the same file
// keeps its cache, a rewritten one (even with the same bytes, even with its mtime put back) gets another, and
// loading one needs no node:crypto (a module load of ~4 ms in every plugin call).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fileKey, sourceKey } from '../../src/package/code-cache';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-code-cache-key-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function keyOf(file: string): string {
  const fd = openSync(file, 'r');
  try {
    return fileKey(fd);
  } finally {
    closeSync(fd);
  }
}

it('names the same file alike, and a file written again otherwise, though its bytes and mtime are the same', async () => {
  const file = join(dir, 'bundle.js');
  writeFileSync(file, 'module.exports = 1;\n');
  const first = keyOf(file);
  expect(first).toMatch(/^[0-9a-f]{32}$/);
  expect(keyOf(file)).toBe(first);
  const { mtime } = statSync(file);
  await new Promise((r) => setTimeout(r, 20));
  writeFileSync(file, 'module.exports = 1;\n');
  utimesSync(file, mtime, mtime);
  expect(keyOf(file)).not.toBe(first);
  expect(sourceKey('module.exports = 1;\n')).toMatch(/^[0-9a-f]{32}$/);
});

it('loads a bundle file through its cache without loading node:crypto', () => {
  const bundle = join(dir, 'bundle.js');
  writeFileSync(bundle, 'module.exports = { answer: 42 };\n');
  const script = join(dir, 'load.js');
  const codeCache = join(__dirname, '..', '..', 'dist', 'package', 'code-cache.js');
  writeFileSync(
    script,
    `const m = require(${JSON.stringify(codeCache)}).requireWithCodeCache(${JSON.stringify(bundle)}, ${JSON.stringify(join(dir, 'cache'))});
     process.stdout.write(JSON.stringify({ answer: m.answer, crypto: process.moduleLoadList.some((n) => n === 'NativeModule crypto') }));`,
  );
  execFileSync('mkdir', ['-m', '0700', join(dir, 'cache')]);
  for (let run = 0; run < 2; run++) {
    expect(JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8', env: { PATH: process.env.PATH } }))).toEqual({ answer: 42, crypto: false });
  }
  // the second run read the cache the first wrote
  expect(readdirSync(join(dir, 'cache'))).toEqual([expect.stringMatching(/^bundle\.js-[0-9a-f]{32}\.v8cache$/)]);
});
