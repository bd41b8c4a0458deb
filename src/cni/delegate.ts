// Running another CNI plugin (the IPAM plugin) the way a runtime does: found in CNI_PATH, the call's environment
// (one-shot) or its CNI variables alone (the daemon; CniEnv.delegateEnv) with CNI_COMMAND set, the config on stdin,
// its result or error object on stdout.
import type { Env } from '../config';
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import { isSysError } from '../errors';
import { runProgram, startProgram, type ProgramCall, type ProgramOutcome } from '../proc/run-program';
import { DEFAULT_IPAM_TIMEOUT_MS } from './env';
import { CNI_ERR, CniError } from './errors';
import { pluginNameProblem } from '../lend';

/** The call's bound on the plugin's run, or the error that SRIOVCTL_IPAM_TIMEOUT is unusable (env.ts). */
function boundOf(call: DelegateCall): number {
  if (call.timeoutMs instanceof CniError) throw call.timeoutMs;
  return call.timeoutMs ?? DEFAULT_IPAM_TIMEOUT_MS;
}

/** The first executable regular file named `type` in the CNI_PATH directories. */
export function findPlugin(type: string, cniPath: readonly string[]): string {
  // whatever the name came from (a config, a record), it is only ever looked up in CNI_PATH
  const bad = pluginNameProblem(type);
  if (bad) throw new CniError(CNI_ERR.IPAM_EXEC_FAILED, `failed to find plugin: ${bad}`, type);
  for (const dir of cniPath) {
    const found = pluginIn(dir, type);
    if (found) return found;
  }
  throw new CniError(CNI_ERR.IPAM_EXEC_FAILED, `failed to find plugin "${type}" in path [${cniPath.join(' ')}]`, type);
}

/** `dir`/`type` when it is an executable regular file (`type` a valid plugin name), else null. */
export function pluginIn(dir: string, type: string): string | null {
  const candidate = join(dir, type);
  try {
    if (!statSync(candidate).isFile()) return null;
    accessSync(candidate, constants.X_OK);
    return candidate;
  } catch {
    return null;
  }
}

export interface DelegateCall {
  /** Absolute path of the plugin. */
  path: string;
  /** How to name it in errors ('ipam host-local'). */
  label: string;
  command: string;
  /** The environment it inherits: the call's (CniEnv.delegateEnv). Absent: none. */
  inherit?: Env;
  /** Variables overriding those (CNI_CONTAINERID for GC's per-attachment DEL, …). */
  env?: Record<string, string>;
  stdin: string;
  /**
   * How long it may run (SRIOVCTL_IPAM_TIMEOUT, read at the front door; default DEFAULT_IPAM_TIMEOUT_MS), or why
   * that variable is unusable.
   */
  timeoutMs?: number | CniError;
}

/** Runs the plugin; its stdout on success, its own error (code and message) as a CniError on failure. */
export function execDelegate(call: DelegateCall): DelegateOutput {
  const timeoutMs = boundOf(call);
  let res: ProgramOutcome;
  try {
    res = runProgram(programCallOf(call, timeoutMs));
  } catch (err) {
    throw startFailure(call, err);
  }
  return judgeOutcome(call, res, timeoutMs);
}

/**
 * execDelegate with the plugin running on a pool thread: started now (this call's environment is taken now),
 * settled when it has exited. Lets ADD and DEL run an IPAM plugin while the NIC moves.
 */
export async function startDelegate(call: DelegateCall): Promise<DelegateOutput> {
  const timeoutMs = boundOf(call);
  let res: ProgramOutcome;
  try {
    res = await startProgram(programCallOf(call, timeoutMs));
  } catch (err) {
    throw startFailure(call, err);
  }
  return judgeOutcome(call, res, timeoutMs);
}

export interface DelegateOutput {
  stdout: string;
  stderr: string;
}

function programCallOf(call: DelegateCall, timeoutMs: number): ProgramCall {
  return { path: call.path, stdin: call.stdin, env: { ...call.inherit, ...call.env, CNI_COMMAND: call.command }, timeoutMs, maxOutput: 16 * 1024 * 1024 };
}

function startFailure(call: DelegateCall, err: unknown): unknown {
  if (!isSysError(err)) return err;
  return new CniError(CNI_ERR.IPAM_EXEC_FAILED, `${call.label} ${call.command}: ${err.message}`, call.path);
}

function judgeOutcome(call: DelegateCall, res: ProgramOutcome, timeoutMs: number): DelegateOutput {
  if (res.timedOut) {
    throw new CniError(CNI_ERR.IPAM_EXEC_FAILED, `${call.label} ${call.command}: timed out after ${timeoutMs / 1000} s`, call.path);
  }
  if (res.outputTooLarge) {
    throw new CniError(CNI_ERR.IPAM_EXEC_FAILED, `${call.label} ${call.command}: more than 16 MiB of output`, call.path);
  }
  if (res.status === 0) return { stdout: res.stdout, stderr: res.stderr };
  throw delegateFailure(call, res.status, res.signal, res.stdout, res.stderr);
}

/** The plugin's error object passed on with its own code; anything else becomes ours (104). */
function delegateFailure(call: DelegateCall, status: number | null, signal: string | null, stdout: string, stderr: string): CniError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    // not an error object
  }
  if (parsed && typeof parsed === 'object' && typeof (parsed as { code?: unknown }).code === 'number') {
    const p = parsed as { code: number; msg?: unknown; details?: unknown };
    const msg = typeof p.msg === 'string' ? p.msg : 'failed';
    const details = typeof p.details === 'string' ? p.details : '';
    return new CniError(p.code, `${call.label} ${call.command}: ${msg}`, details);
  }
  const how = signal ? `killed by ${signal}` : `exit status ${status}`;
  const text = (stderr || stdout).trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  return new CniError(CNI_ERR.IPAM_EXEC_FAILED, `${call.label} ${call.command} failed (${how})`, text);
}
