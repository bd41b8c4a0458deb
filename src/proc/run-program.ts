// Run a program to completion (synchronously, or on a pool thread while the caller goes on) with stdin given and stdout/stderr captured — through the addon,
// not node:child_process: the CNI plugin is a fresh process per call, and child_process drags net and stream
// into every start-up that calls an IPAM plugin.
import { isAbsolute } from 'node:path';
import { native, type NativeProgramOutcome } from '../native';

export interface ProgramCall {
  /** Absolute path of the executable (no PATH search). */
  path: string;
  /** Arguments after argv[0] (argv[0] is the path). */
  args?: readonly string[];
  /** The whole environment of the child. */
  env: Readonly<Record<string, string | undefined>>;
  stdin?: string;
  /** The child is killed with SIGKILL after this long. */
  timeoutMs: number;
  /** Bytes per stream; a child that writes more is killed. */
  maxOutput: number;
}

/** How the program ended and what it wrote (the addon's own shape). */
export type ProgramOutcome = NativeProgramOutcome;

/** Throws SysError when the program cannot be started (ENOENT, EACCES, ENOEXEC, …). */
export function runProgram(call: ProgramCall): ProgramOutcome {
  return native.runProgram(...nativeArgs(call));
}

/**
 * The same run on a pool thread: the promise settles when the program has exited (or was killed at its
 * deadline), and rejects with the SysError runProgram would throw. A bad call throws at once, as runProgram does.
 */
export function startProgram(call: ProgramCall): Promise<ProgramOutcome> {
  return native.startProgram(...nativeArgs(call));
}

function nativeArgs(call: ProgramCall): Parameters<typeof native.runProgram> {
  if (typeof call.path !== 'string' || !isAbsolute(call.path)) throw new TypeError(`program path must be absolute: ${String(call.path)}`);
  const args = call.args ?? [];
  const env: string[] = [];
  for (const [name, value] of Object.entries(call.env)) {
    if (value === undefined) continue;
    if (name === '' || name.includes('=')) throw new TypeError(`invalid environment variable name ${JSON.stringify(name)}`);
    env.push(`${name}=${value}`);
  }
  for (const s of [call.path, ...args, ...env]) {
    if (typeof s !== 'string' || s.includes('\0')) throw new TypeError(`program argument or environment entry contains NUL: ${JSON.stringify(s)}`);
  }
  const stdin = call.stdin ?? '';
  if (!Number.isInteger(call.timeoutMs) || call.timeoutMs <= 0 || call.timeoutMs > 2 ** 31 - 1) {
    throw new TypeError(`invalid timeout ${call.timeoutMs}`);
  }
  if (!Number.isInteger(call.maxOutput) || call.maxOutput <= 0 || call.maxOutput > 2 ** 32 - 1) {
    throw new TypeError(`invalid output bound ${call.maxOutput}`);
  }
  return [call.path, [call.path, ...args], env, stdin, call.timeoutMs, call.maxOutput];
}
