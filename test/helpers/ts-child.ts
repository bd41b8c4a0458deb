// Run a TypeScript file of this repository as a real child process (see ts-register.cjs).
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

const REGISTER = path.join(__dirname, 'ts-register.cjs');

/** Start `script` (a .ts path) with `args`; stdout/stderr are pipes. */
export function spawnTs(script: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return spawn(process.execPath, ['-r', REGISTER, script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resolves with the first stdout line matching `re` (rejects if the child exits first, or after timeoutMs: a hang guard, generous for a busy machine). */
export function waitForLine(child: ChildProcess, re: RegExp, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const done = (fn: () => void) => {
      clearTimeout(timer);
      child.stdout!.off('data', onOut);
      child.stderr!.off('data', onErr);
      child.off('close', onExit);
      fn();
    };
    const onOut = (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => re.test(l));
      if (line !== undefined) done(() => resolve(line));
    };
    const onErr = (d: Buffer) => (err += d.toString());
    const onExit = (code: number | null, sig: string | null) =>
      done(() => reject(new Error(`child exited (${code ?? sig}) before printing ${re}; stdout: ${out} stderr: ${err}`)));
    const timer = setTimeout(
      () => done(() => reject(new Error(`no ${re} from child within ${timeoutMs} ms; stdout: ${out} stderr: ${err}`))),
      timeoutMs,
    );
    child.stdout!.on('data', onOut);
    child.stderr!.on('data', onErr);
    // 'close', not 'exit': the line may still be in the pipe when 'exit' is emitted
    child.on('close', onExit);
  });
}

/**
 * Resolves with the exit code/signal and everything printed from now on, once the child has exited and its
 * pipes are drained ('close', not 'exit': 'exit' can come before the last bytes of stdout are read). The
 * deadline only guards against a hang, never measures anything: a child still running after it is killed
 * (a test must not leave processes behind) and the wait rejects, saying so and what the child printed.
 */
export function waitForExit(
  child: ChildProcess,
  timeoutMs = 120_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = child.stdout!.closed && child.stderr!.closed && (child.exitCode !== null || child.signalCode !== null);
    if (closed) {
      resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr });
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child ${child.pid} still running after ${timeoutMs} ms (killed); stdout: ${stdout} stderr: ${stderr}`));
    }, timeoutMs);
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Kill and reap (for cleanup; ignores a child that is already gone). */
export async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}
