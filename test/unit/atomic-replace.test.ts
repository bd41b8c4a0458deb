// Replacing a file (src/ledger/atomic-file.ts): an existing regular file is swapped with the new content
// (renameat2 RENAME_EXCHANGE) and its old content removed, so nothing is renamed over an existing name (on ext4 that
// starts the new file's writeback at once, and the rename and the later unlink wait on the disk). What a reader
// sees is as with a rename: the old content or the new, never a mix, and no temp file left beside it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { writeFileAtomic } from '../../src/ledger/atomic-file';
import { native } from '../../src/native';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-atomic-replace-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

it('the addon swaps two files in one step, and names the call when one is missing', () => {
  const a = path.join(tmp, 'a');
  const b = path.join(tmp, 'b');
  fs.writeFileSync(a, 'A');
  fs.writeFileSync(b, 'B');
  const [inoA, inoB] = [a, b].map((f) => fs.statSync(f).ino);
  native.exchangeFiles(a, b);
  expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['B', 'A']);
  expect([fs.statSync(a).ino, fs.statSync(b).ino]).toEqual([inoB, inoA]);
  let err: unknown;
  try {
    native.exchangeFiles(a, path.join(tmp, 'missing'));
  } catch (e) {
    err = e;
  }
  expect(isSysError(err, 'ENOENT') && err.op).toBe('renameat2 exchange');
});

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

it('refuses a directory in the file\'s place, as a rename does: nothing is swapped out of the way', () => {
  const file = path.join(tmp, 'rec.json');
  fs.mkdirSync(file);
  fs.writeFileSync(path.join(file, 'inside'), 'x');
  expect(() => writeFileAtomic(file, 'new', 0o600)).toThrow();
  expect(fs.statSync(file).isDirectory()).toBe(true);
  expect(fs.readdirSync(tmp)).toEqual(['rec.json']);
});
