// Running another CNI plugin (the IPAM plugin) the way a runtime does: found in CNI_PATH, the call's environment
// (one-shot) or its CNI variables alone (the daemon) with CNI_COMMAND set, the config on stdin, its result or error
// object on stdout.
import { AsyncLocalStorage } from 'node:async_hooks';
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import { isSysError } from '../errors';
import { runProgram, startProgram, type ProgramCall, type ProgramOutcome } from '../proc/run-program';
import { CNI_VARIABLES, DEFAULT_IPAM_TIMEOUT_MS } from './env';
import { CNI_ERR, CniError } from './errors';
import { pluginNameProblem } from '../lend';

/**
 * The environment a delegated plugin inherits. The one-shot plugin passes the runtime's through, CNI_* included, as
 * libcni and the reference plugins do (the spec's "same environment"): it runs with the caller's own privileges, so
 * nothing the caller sets there is more than the caller could run itself. The daemon runs plugins with privileges
 * the caller may not have: there a plugin gets the CNI variables and PATH alone (`clean`), never LD_PRELOAD or any
 * other variable of the caller's.
 */
interface CallEnv {
  env: NodeJS.ProcessEnv;
  clean: boolean;
}
const callEnv = new AsyncLocalStorage<CallEnv>();

/** What a plugin run from a clean call gets: the CNI protocol's variables and PATH. */
const CLEAN_DELEGATE_ENV: readonly string[] = [...CNI_VARIABLES, 'PATH'];

/** Runs `fn` as a call whose environment is `env` (runCni: every call, one-shot or in the daemon). */
export function withCallEnv<T>(env: NodeJS.ProcessEnv, fn: () => T, clean = false): T {
  return callEnv.run({ env, clean }, fn);
}

const inherited = (): NodeJS.ProcessEnv => callEnv.getStore()?.env ?? process.env;

function delegateEnv(): NodeJS.ProcessEnv {
  const call = callEnv.getStore();
  if (!call?.clean) return inherited();
  return Object.fromEntries(CLEAN_DELEGATE_ENV.filter((k) => call.env[k] !== undefined).map((k) => [k, call.env[k]]));
}

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
  /** Variables overriding ours (CNI_CONTAINERID for GC's per-attachment DEL, …). */
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
  return { path: call.path, stdin: call.stdin, env: { ...delegateEnv(), ...call.env, CNI_COMMAND: call.command }, timeoutMs, maxOutput: 16 * 1024 * 1024 };
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
