// A record written before a NIC moves (src/fs/atomic-file.ts): its data fsynced before it is visible, its
// directory fsynced while the NIC moves, on disk once finish() returns, and a failed fsync is the caller's error,
// never lost on the addon's thread.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { writeFileAtomicDurableLater as durableLaterSteps } from '../../src/fs/atomic-file';
import { runWaits, runWaitsSync } from '../../src/util/wait';
import { native } from '../../src/native';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-durable-later-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Descriptors of this process open on `target` (read through /proc: other threads' fds never count). */
const fdsOn = (target: string) =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false; // closed meanwhile (the readdir's own fd)
    }
  }).length;

const writeFileAtomicDurableLater = (...args: Parameters<typeof durableLaterSteps>) => runWaitsSync(durableLaterSteps(...args));

describe('writeFileAtomicDurableLater', () => {
  it('puts the file in place before finish(), leaves no temp file, and holds only its directory open until finished', () => {
    const file = path.join(tmp, 'rec.json');
    const pending = writeFileAtomicDurableLater(file, '{"a":1}\n', 0o600);
    // visible at once: a reader, or the next process after a crash of this one, finds it
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(tmp)).toEqual(['rec.json']);
    // the file's data was fsynced before the rename; its directory is held open for its fsync until finish()
    expect([fdsOn(file), fdsOn(tmp)]).toEqual([0, 1]);
    pending.finish();
    pending.finish(); // idempotent
    expect([fdsOn(file), fdsOn(tmp)]).toEqual([0, 0]);
  });

  it("its data's fsync off the thread (as the daemon runs it) puts the same file in place, with its second name", async () => {
    const file = path.join(tmp, 'rec.json');
    const second = path.join(tmp, '.rec.json.durable');
    const pending = await runWaits(durableLaterSteps(file, '{"b":2}\n', 0o600, { secondName: second }));
    expect(fs.readFileSync(file, 'utf8')).toBe('{"b":2}\n');
    expect(fs.statSync(second).ino).toBe(fs.statSync(file).ino);
    expect(fs.readdirSync(tmp).sort()).toEqual(['.rec.json.durable', 'rec.json']);
    pending.finish();
    expect(fdsOn(tmp)).toBe(0);
  });

  it('a file that cannot be renamed into place leaves nothing behind and holds nothing open', () => {
    const file = path.join(tmp, 'rec.json');
    fs.mkdirSync(file); // a directory where the file goes: the rename fails (EISDIR)
    expect(() => writeFileAtomicDurableLater(file, 'x', 0o600)).toThrow(/EISDIR/);
    expect(fs.readdirSync(tmp)).toEqual(['rec.json']);
    expect(fs.statSync(file).isDirectory()).toBe(true);
    expect(fdsOn(tmp)).toBe(0);
  });
});

describe('the addon fsync job', () => {
  it("reports the first fsync that failed as a SysError with the kernel's errno (a pipe cannot be fsynced)", () => {
    const file = fs.openSync(path.join(tmp, 'f'), 'w');
    const [r, w] = pipe();
    try {
      const job = native.startFsync([file, r]);
      let err: unknown;
      try {
        native.finishFsync(job);
      } catch (e) {
        err = e;
      }
      expect(isSysError(err, 'EINVAL'), String(err)).toBe(true);
      expect((err as { op: string }).op).toBe('fsync');
    } finally {
      for (const fd of [file, r, w]) fs.closeSync(fd);
    }
  });

  it('succeeds for files and directories, and refuses a handle that is not one of its jobs', () => {
    const file = fs.openSync(path.join(tmp, 'f'), 'w');
    const dir = fs.openSync(tmp, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      native.finishFsync(native.startFsync([file, dir]));
    } finally {
      fs.closeSync(file);
      fs.closeSync(dir);
    }
    expect(() => native.finishFsync({} as never)).toThrow(/not an fsync handle/);
    expect(() => native.startFsync(['1'] as never)).toThrow(/numbers/);
  });
});

/** Two ends of a FIFO (node has no pipe(2)): opened read-write first, neither open blocks. */
function pipe(): [number, number] {
  const fifo = path.join(tmp, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const r = fs.openSync(fifo, fs.constants.O_RDWR);
  const w = fs.openSync(fifo, fs.constants.O_WRONLY);
  return [r, w];
}
