// The bounded sysfs write: one write of the value, errno codes, no file creation, and a real time bound (a FIFO
// blocks open-for-write until a reader comes, like a driver stuck in a store).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSysfs } from '../../src/sriov';
import { sysErrorOf } from '../helpers/sys-error';

let tmp: string;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-write-'));
});

afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});


describe('writeSysfs', () => {
  it('replaces the content of an existing attribute with the value', async () => {
    const file = path.join(tmp, 'sriov_numvfs');
    fs.writeFileSync(file, '16\n');
    await writeSysfs(file, '4');
    expect(fs.readFileSync(file, 'utf8')).toBe('4');
    await writeSysfs(file, '\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('\n');
  });

  it('never creates a missing attribute: ENOENT naming the file and the value', async () => {
    const file = path.join(tmp, 'bind');
    const err = await sysErrorOf(writeSysfs(file, '0000:03:02.0'));
    expect(err.code).toBe('ENOENT');
    expect(err.errno).toBe(os.constants.errno.ENOENT);
    expect(err.op).toBe(`sysfs write ${file}`);
    expect(err.message).toBe('writing "0000:03:02.0" failed: No such file or directory');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('maps other failures to their errno code', async () => {
    expect((await sysErrorOf(writeSysfs(tmp, '1'))).code).toBe('EISDIR');
  });

  it('a write that blocks is abandoned at the bound with TIMEOUT, and the blocked writer is killed', async () => {
    const fifo = path.join(tmp, 'stuck');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    const err = await sysErrorOf(writeSysfs(fifo, '1', { timeoutMs: 200 }));
    const took = Date.now() - started;
    expect(err.code).toBe('ETIMEDOUT');
    expect(err.message).toBe('writing "1" did not finish within 200 ms (a driver may be stuck)');
    expect(err.op).toBe(`sysfs write ${fifo}`);
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(30_000); // abandoned, not waited for (a FIFO write without a reader never ends)
    // no writer is left on the FIFO: a non-blocking reader sees end-of-file, not EAGAIN (a live writer)
    await new Promise((r) => setTimeout(r, 100));
    const fd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      expect(fs.readSync(fd, Buffer.alloc(8))).toBe(0);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('a slow reader within the bound gets the whole value in one piece', async () => {
    const fifo = path.join(tmp, 'slow');
    execFileSync('mkfifo', [fifo]);
    const write = writeSysfs(fifo, '0000:03:02.0', { timeoutMs: 30_000 }); // the bound is not what is tested here
    await new Promise((r) => setTimeout(r, 100));
    const fd = fs.openSync(fifo, fs.constants.O_RDONLY);
    let got = '';
    try {
      const buf = Buffer.alloc(64);
      for (let n; (n = fs.readSync(fd, buf)) > 0; ) got += buf.subarray(0, n).toString();
    } finally {
      fs.closeSync(fd);
    }
    await write;
    expect(got).toBe('0000:03:02.0');
  });

  it('validates its arguments', async () => {
    expect(() => writeSysfs(path.join(tmp, 'x'), '1', { timeoutMs: 0 })).toThrow(TypeError);
    expect(() => writeSysfs(path.join(tmp, 'x'), 'x'.repeat(5000))).toThrow(/too long/);
  });
});
