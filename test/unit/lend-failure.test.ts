// failureOf: what the layers below raise, read once. A call of Node's own that the machine refused (a state file the
// file system will not write) is the kernel's errno, as the addon's SysError would be; anything else is a bug.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SysError } from '../../src/errors';
import { failureOf } from '../../src/lend';
import { thrown } from '../helpers/thrown';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-failure-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('failureOf', () => {
  it("a file system call's refusal is a Kernel failure: its errno, its syscall and path as the op", () => {
    const dir = path.join(tmp, 'records');
    fs.mkdirSync(dir);
    const f = failureOf(thrown(() => fs.mkdirSync(dir)));
    expect(f.kind).toBe('Kernel');
    const error = (f as { error: SysError }).error;
    expect(error).toBeInstanceOf(SysError);
    expect(error).toMatchObject({ code: 'EEXIST', errno: os.constants.errno.EEXIST, op: `mkdir ${dir}` });
    expect(error.describe()).toBe(`mkdir ${dir}: file already exists (EEXIST)`);
  });

  it('a missing file under a writer is that write failing, never a NIC or namespace not found', () => {
    const missing = path.join(tmp, 'gone', 'x.json');
    const f = failureOf(thrown(() => fs.renameSync(missing, `${missing}.2`)));
    expect(f).toMatchObject({ kind: 'Kernel', error: { code: 'ENOENT', op: `rename ${missing}` } });
  });

  it('a refusal with no path names its syscall alone', () => {
    const f = failureOf(thrown(() => fs.fsyncSync(987_654)));
    expect(f).toMatchObject({ kind: 'Kernel', error: { code: 'EBADF', op: 'fsync' } });
  });

  it("anything else stays a bug: an errno-looking code with no syscall, Node's own argument errors, a TypeError", () => {
    const forged = Object.assign(new Error('EPERM: not from a syscall'), { code: 'EPERM' });
    expect(failureOf(forged).kind).toBe('Internal');
    const badArgument = thrown(() => fs.readFileSync(42 as unknown as string, { encoding: 'nope' as BufferEncoding }));
    expect(failureOf(badArgument).kind).toBe('Internal');
    expect(failureOf(new TypeError("Cannot read properties of undefined (reading 'name')")).kind).toBe('Internal');
    expect(failureOf('a string').kind).toBe('Internal');
  });
});
