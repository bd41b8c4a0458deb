// Replacing a file (src/fs/atomic-file.ts): the new content is renamed over the old file, so a reader sees the
// old content or the new, never a mix, and no temp file is left beside it. What a power cut leaves of a rewrite is
// test/integration/ledger-power-cut.test.ts's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/fs/atomic-file';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-atomic-replace-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

it('replaces an existing file (durably or not) and a missing one, leaving the file alone in its directory', () => {
  const file = path.join(tmp, 'rec.json');
  writeFileAtomic(file, 'first', 0o600);
  const held = fs.openSync(file, 'r');
  try {
    writeFileAtomic(file, 'second', 0o600, { durable: false });
    writeFileAtomic(file, 'third', 0o640);
    expect(fs.readFileSync(file, 'utf8')).toBe('third');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    // a reader that opened the old file still reads it whole
    expect(fs.readFileSync(held, 'utf8')).toBe('first');
  } finally {
    fs.closeSync(held);
  }
  expect(fs.readdirSync(tmp)).toEqual(['rec.json']);
});

it('refuses a directory in the file\'s place: nothing is moved out of the way', () => {
  const file = path.join(tmp, 'rec.json');
  fs.mkdirSync(file);
  fs.writeFileSync(path.join(file, 'inside'), 'x');
  expect(() => writeFileAtomic(file, 'new', 0o600)).toThrow();
  expect(fs.statSync(file).isDirectory()).toBe(true);
  expect(fs.readdirSync(tmp)).toEqual(['rec.json']);
});
