// A lock file removed by its holder while another process waits on it: the waiter, woken on the removed file, must
// not think it holds the lock beside whoever locked the file made after it (real processes, real flock).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockFile, removeLockFileIfFree } from '../../src/fs/file-lock';
import { spawnTs, waitForLine } from '../helpers/ts-child';

const CHILD = path.join(__dirname, 'lock-waiter-child.ts');

/** Whether process `pid` has `file` open (it is waiting for its lock: lockFile opens it once, then waits). */
function hasOpen(pid: number, file: string): boolean {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

describe('a lock file removed under a waiter', () => {
  let dir: string | null = null;
  afterEach(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  it('the waiter takes the new file, not the removed one', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-lock-'));
    const file = path.join(dir, 'nic.lock');
    const first = lockFile(file, { timeoutMs: 0 });
    if (!('held' in first)) throw new Error('not taken');
    const child = spawnTs(CHILD, [file, '3000']);
    const answer = waitForLine(child, /^\{/);
    while (!hasOpen(child.pid!, file)) await new Promise((r) => setTimeout(r, 10));

    // the holder removes the file, then lets go; meanwhile another process locks the file made anew
    fs.unlinkSync(file);
    const second = lockFile(file, { timeoutMs: 0 });
    if (!('held' in second)) throw new Error('the new file was not taken');
    first.held.release();
    try {
      expect(JSON.parse(await answer)).toEqual({ held: false });
    } finally {
      second.held.release();
    }
  });

  it('removeLockFileIfFree: never while held, never when the caller says no, else removed', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-lock-'));
    const file = path.join(dir, 'nic.lock');
    const held = lockFile(file, { timeoutMs: 0 });
    if (!('held' in held)) throw new Error('not taken');
    expect(removeLockFileIfFree(file, () => true)).toBe(false);
    held.held.release();
    expect(removeLockFileIfFree(file, () => false)).toBe(false);
    expect(fs.existsSync(file)).toBe(true);
    expect(removeLockFileIfFree(file, () => true)).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
    expect(removeLockFileIfFree(file, () => true)).toBe(false);
  });
});
