// External tools (k3d, kind, kubectl, docker/podman, ip): run without a shell, bounded in time, and failing with
// one SysError that names the command and carries the tool's own words.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Env } from '../../config';
import { SysError } from '../../errors';

export interface ToolResult {
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Kill the tool after this long (default 120 s): a wedged daemon must not hang `up` or `down`. */
  timeoutMs?: number;
  /** Written to the tool's stdin. */
  input?: string;
  /** Added to the runner's environment for this call. */
  extraEnv?: Record<string, string>;
}

export type ToolRunner = (cmd: string, args: string[], opts?: RunOptions) => Promise<ToolResult>;

const DEFAULT_TIMEOUT_MS = 120_000;

/** The last non-empty line: where CLIs like k3d and kind put their final error. */
function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  return lines[lines.length - 1] ?? '';
}

/**
 * A runner that reports each command to `onCommand` before it runs (for -v) and uses `env`, the front door's (PATH
 * decides which k3d/kind/kubectl/docker runs — tests put stand-ins first).
 */
export function toolRunner(opts: { env: Env; onCommand?: (line: string) => void }): ToolRunner {
  return (cmd, args, runOpts = {}) => {
    opts.onCommand?.(`$ ${[cmd, ...args].map(shellQuote).join(' ')}`);
    const base = opts.env;
    return runTool(cmd, args, { ...runOpts, env: runOpts.extraEnv ? { ...base, ...runOpts.extraEnv } : base });
  };
}

export function runTool(
  cmd: string,
  args: string[],
  /** `env`: the tool's whole environment (toolRunner gives the front door's); absent, Node's default (this process's). */
  opts: Omit<RunOptions, 'extraEnv'> & { env?: Env } = {},
): Promise<ToolResult> {
  const op = `${cmd} ${args.slice(0, 2).join(' ')}`.trim();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const code = e.code === 'ENOENT' ? 'ENOENT' : 'TOOL_FAILED';
      const why = e.code === 'ENOENT' ? `${cmd} is not installed (not on PATH)` : e.message;
      reject(new SysError(why, { code, op }));
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (timedOut) {
        reject(new SysError(`${cmd} did not finish within ${Math.round(timeoutMs / 1000)} s`, { code: 'ETIMEDOUT', op }));
      } else if (status !== 0) {
        const said = lastLine(stderr) || lastLine(stdout) || (signal ? `killed by ${signal}` : `exit status ${status}`);
        reject(new SysError(said, { code: 'TOOL_FAILED', op }));
      } else {
        resolve({ stdout, stderr });
      }
    });
    child.stdin.on('error', () => undefined); // a tool that exits without reading stdin
    child.stdin.end(opts.input ?? '');
  });
}

/** The executable `cmd` resolves to on PATH, or null. */
export function findOnPath(cmd: string, env: Env): string | null {
  if (cmd.includes('/')) return isExecutable(cmd) ? cmd : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, cmd);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** For display only: the command as one would type it. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
