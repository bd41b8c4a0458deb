// The addon's program runner (src/proc/run-program.ts), which the CNI plugin uses to call IPAM plugins: exit
// status, signals, the deadline, the output bound, stdin, the environment, what a grandchild cannot do, the
// pool-thread variant (startProgram), and that a child dies with its caller.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { runProgram, startProgram } from '../../src/proc/run-program';
import { isSysError } from '../../src/errors';

const SH = '/bin/sh';
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-program-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sh = (script: string, extra: { stdin?: string; timeoutMs?: number; maxOutput?: number; env?: Record<string, string> } = {}) =>
  runProgram({
    path: SH,
    args: ['-c', script],
    env: extra.env ?? { PATH: '/usr/bin:/bin' },
    stdin: extra.stdin,
    timeoutMs: extra.timeoutMs ?? 10_000,
    maxOutput: extra.maxOutput ?? 1 << 20,
  });

describe('runProgram', () => {
  it('returns the exit status, stdout and stderr apart', () => {
    const r = sh('echo out; echo err >&2; exit 3');
    expect(r).toMatchObject({ status: 3, signal: null, timedOut: false, outputTooLarge: false, stdout: 'out\n', stderr: 'err\n' });
  });

  it('feeds stdin whole (larger than a pipe buffer) and closes it', () => {
    const input = 'x'.repeat(300_000) + '\n';
    const r = sh('wc -c', { stdin: input });
    expect(r.status).toBe(0);
    expect(Number(r.stdout.trim())).toBe(input.length);
  });

  it('a child that exits without reading stdin is heard, not an error', () => {
    const r = sh('echo early', { stdin: 'y'.repeat(4 << 20) });
    expect(r).toMatchObject({ status: 0, stdout: 'early\n' });
  });

  it('passes exactly the environment given', () => {
    const r = sh('echo "$ONE|$TWO|${HOME-unset}"', { env: { PATH: '/bin', ONE: '1', TWO: 'a b=c' } });
    expect(r.stdout).toBe('1|a b=c|unset\n');
  });

  it('names the signal that ended the child', () => {
    expect(sh('kill -TERM $$')).toMatchObject({ status: null, signal: 'SIGTERM' });
  });

  it('starts the child with no standard signal ignored or blocked (Node ignores SIGPIPE; SIG_IGN survives exec)', () => {
    const r = runProgram({ path: '/bin/grep', args: ['-E', '^Sig(Ign|Blk):', '/proc/self/status'], env: {}, timeoutMs: 10_000, maxOutput: 4096 });
    const mask = (name: string) => BigInt('0x' + /\t([0-9a-f]+)/.exec(r.stdout.split('\n').find((l) => l.startsWith(name))!)![1]);
    expect(mask('SigBlk:')).toBe(0n);
    // signals 1–31; glibc's posix_spawn leaves its own two internal real-time signals (32, 33) ignored
    expect(mask('SigIgn:') & 0x7fffffffn).toBe(0n);
  });

  it('kills a child that outlives the deadline', () => {
    const t0 = Date.now();
    // exec: the shell becomes the sleeper, so the SIGKILL leaves no orphan behind
    const r = sh('exec sleep 30', { timeoutMs: 200 });
    expect(r).toMatchObject({ timedOut: true, signal: 'SIGKILL', status: null });
    expect(Date.now() - t0).toBeLessThan(25_000); // not the 30 s of the sleep, however busy the machine
  });

  it('the deadline holds for a child that closed stdout and stderr and lives on (SIGKILL, reaped)', () => {
    const t0 = Date.now();
    const r = sh('exec >&- 2>&- <&-; exec sleep 30', { timeoutMs: 1000, stdin: 'ignored' });
    // a generous margin: the machine may be busy; without the fix this returned after the sleeper's 30 s
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r).toMatchObject({ timedOut: true, signal: 'SIGKILL', status: null });
  });

  it('a child that closed its pipes is still waited for, and its exit status read', () => {
    const r = sh('echo before; exec >&- 2>&-; sleep 0.3; exit 7', { timeoutMs: 20_000 });
    expect(r).toMatchObject({ status: 7, signal: null, timedOut: false, stdout: 'before\n' });
  });

  it('kills a child that writes more than the bound', () => {
    const r = sh('yes', { maxOutput: 100_000 });
    expect(r.outputTooLarge).toBe(true);
    expect(r.signal).toBe('SIGKILL');
  });

  it('returns when the child exits even if a grandchild keeps the pipes open', () => {
    const t0 = Date.now();
    const r = sh('sleep 20 & echo "started $!"');
    const grandchild = Number(/^started (\d+)\n$/.exec(r.stdout)?.[1]);
    try {
      expect(r).toMatchObject({ status: 0 });
      expect(grandchild).toBeGreaterThan(0);
      expect(Date.now() - t0).toBeLessThan(15_000); // not the 20 s of the sleep, however busy the machine
    } finally {
      if (grandchild > 0) process.kill(grandchild, 'SIGKILL');
    }
  });

  it('a program that cannot be started is a SysError with its errno', () => {
    const missing = path.join(dir, 'missing');
    const noShebang = path.join(dir, 'plain');
    fs.writeFileSync(noShebang, 'echo hi\n', { mode: 0o755 });
    const notExec = path.join(dir, 'notexec');
    fs.writeFileSync(notExec, '#!/bin/sh\n', { mode: 0o644 });
    for (const [p, code] of [[missing, 'ENOENT'], [noShebang, 'ENOEXEC'], [notExec, 'EACCES']] as const) {
      let caught: unknown;
      try {
        runProgram({ path: p, env: {}, timeoutMs: 1000, maxOutput: 1024 });
      } catch (err) {
        caught = err;
      }
      expect(isSysError(caught, code), `${p}: ${String(caught)}`).toBe(true);
    }
  });

  it('refuses a relative path, NUL bytes, a bad variable name or bound before running anything', () => {
    const base = { env: {}, timeoutMs: 1000, maxOutput: 1024 };
    expect(() => runProgram({ ...base, path: 'sh' })).toThrow(/absolute/);
    expect(() => runProgram({ ...base, path: SH, args: ['a\0b'] })).toThrow(/NUL/);
    expect(() => runProgram({ ...base, path: SH, env: { 'A=B': 'x' } })).toThrow(/variable name/);
    expect(() => runProgram({ ...base, path: SH, timeoutMs: 0 })).toThrow(/timeout/);
    expect(() => runProgram({ ...base, path: SH, maxOutput: -1 })).toThrow(/bound/);
  });
});

describe('startProgram', () => {
  it('runs while the JS thread goes on: a child waiting for a file the JS thread writes afterwards finishes', async () => {
    const flag = path.join(dir, 'flag');
    // runProgram here would hold the JS thread until the child gave up (20 s): the file would come too late
    const pending = startProgram({
      path: SH,
      args: ['-c', `i=0; while [ ! -e "${flag}" ]; do i=$((i+1)); [ $i -gt 400 ] && exit 9; sleep 0.05; done; cat; echo done`],
      env: { PATH: '/usr/bin:/bin' },
      stdin: 'input\n',
      timeoutMs: 60_000,
      maxOutput: 1024,
    });
    fs.writeFileSync(flag, '');
    expect(await pending).toMatchObject({ status: 0, signal: null, timedOut: false, stdout: 'input\ndone\n' });
  });

  it('rejects with the SysError runProgram throws; refuses bad arguments at once', async () => {
    const missing = path.join(dir, 'missing');
    const caught = await startProgram({ path: missing, env: {}, timeoutMs: 1000, maxOutput: 1024 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(isSysError(caught, 'ENOENT'), String(caught)).toBe(true);
    expect(() => startProgram({ path: 'sh', env: {}, timeoutMs: 1000, maxOutput: 1024 })).toThrow(/absolute/);
  });
});

describe('a child dies with its caller', () => {
  const DIST = path.resolve(__dirname, '..', '..', 'dist', 'proc', 'run-program.js');

  /** Gone, or a zombie nobody has reaped yet: either way it runs no more. */
  const running = (pid: number): boolean => {
    try {
      return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };

  for (const how of ['runProgram', 'startProgram'] as const) {
    it(`${how}: the caller SIGKILLed, the child it started is killed too`, async () => {
      const pidFile = path.join(dir, 'child.pid');
      const script = `require(${JSON.stringify(DIST)}).${how}({ path: '/bin/sh', args: ['-c', 'echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile} && exec sleep 60'], env: { PATH: '/usr/bin:/bin' }, timeoutMs: 120000, maxOutput: 1024 })`;
      const caller = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
      let child = 0;
      try {
        for (let i = 0; i < 600 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
        child = Number(fs.readFileSync(pidFile, 'utf8'));
        expect(running(child)).toBe(true);
        caller.kill('SIGKILL');
        await new Promise((r) => caller.once('exit', r));
        // the kernel sends the parent-death signal as the caller's thread exits: no 60 s sleeper left behind
        for (let i = 0; i < 200 && running(child); i++) await new Promise((r) => setTimeout(r, 50));
        expect(running(child)).toBe(false);
      } finally {
        caller.kill('SIGKILL');
        if (child > 0 && running(child)) process.kill(child, 'SIGKILL');
      }
    });
  }
});
