// native.readFd, which the CNI plugin reads its stdin with: to end of file, within a deadline and a size bound,
// on a descriptor that stays open (a runtime that never closes stdin) as on one that is not open at all.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { native } from '../../src/native';
import { thrown } from '../helpers/thrown';

let dir: string;
let reader: number;
let writer: number;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-fd-'));
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  // a blocking read end, as stdin usually is: the non-blocking open only avoids waiting for the writer here
  reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  writer = fs.openSync(fifo, fs.constants.O_WRONLY);
});
afterEach(() => {
  for (const fd of [reader, writer]) {
    try {
      fs.closeSync(fd);
    } catch {
      // closed by the test
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('readFd', () => {
  it('returns everything once the writer closes', () => {
    fs.writeSync(writer, 'hello ');
    fs.writeSync(writer, 'world');
    fs.closeSync(writer);
    expect(native.readFd(reader, 10_000, 1024).toString()).toBe('hello world');
  });

  it('a writer that never closes: ETIMEDOUT at the deadline, not a hang', () => {
    fs.writeSync(writer, '{"cniVersion":');
    const t0 = Date.now();
    const err = thrown(() => native.readFd(reader, 300, 1024));
    expect(isSysError(err, 'ETIMEDOUT'), String(err)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('more than the bound: EFBIG', () => {
    fs.writeSync(writer, 'x'.repeat(5000));
    fs.closeSync(writer);
    expect(isSysError(thrown(() => native.readFd(reader, 10_000, 4096)), 'EFBIG')).toBe(true);
  });

  it('a descriptor that is not open reads as empty (a runtime that gave no stdin)', () => {
    expect(native.readFd(987_654, 1000, 1024).length).toBe(0);
  });
});
