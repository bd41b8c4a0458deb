// A `sriovctl daemon` of the test's own, on a socket of its own: started, waited for, stopped (SIGTERM, then
// SIGKILL when it does not drain), and its log kept for the failure message.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { queryDaemon } from '../../src/daemon/query';
import type { DaemonStats } from '../../src/daemon/server';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'bin', 'sriovctl.js');

export interface DaemonProcess {
  child: ChildProcess;
  socket: string;
  /** Everything it wrote to stderr so far. */
  log(): string;
  /** Its status reply (throws when it does not serve). */
  stats(): Promise<DaemonStats>;
  /** Resolves with its exit status once it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, and SIGKILL after `graceMs`; resolves when it is gone. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The daemon's configuration for a test rig: callers (each test) may name their own state dir, sysfs root and
 * plugin dirs below the temp dir, and Debian's plugins are its own. `env` overrides (an empty value unsets).
 */
export const TEST_DAEMON_ENV: Readonly<Record<string, string>> = { SRIOVCTL_DAEMON_CALLER_ROOT: tmpdir(), SRIOVCTL_DAEMON_CNI_PATH: '/usr/lib/cni' };

/**
 * `prefix`: a command the daemon is run under (`unshare -m …`), exec'ing it in the end. Unless `env` names one, the
 * daemon's own state dir is a fresh temporary one, removed when it exits: its sweep gives back the abandoned records
 * of its state dir, and a test's daemon must never sweep (or take calls into) the machine's /var/lib/sriovctl.
 */
export async function startDaemon(socket: string, env: Record<string, string> = {}, timeoutMs = 30_000, prefix: string[] = []): Promise<DaemonProcess> {
  const [cmd, ...args] = [...prefix, process.execPath, CLI, 'daemon'];
  const ownState = env.SRIOVCTL_STATE_DIR === undefined ? mkdtempSync(join(tmpdir(), 'sriovctl-daemon-state-')) : null;
  const child = spawn(cmd, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SRIOVCTL_SOCKET: socket, ...TEST_DAEMON_ENV, ...(ownState ? { SRIOVCTL_STATE_DIR: ownState } : {}), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (ownState) child.once('exit', () => rmSync(ownState, { recursive: true, force: true }));
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-64 * 1024)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  const d: DaemonProcess = {
    child,
    socket,
    log: () => log,
    async stats() {
      const s = await queryDaemon(socket);
      if (!s.serving) throw new Error(s.reason);
      return s.stats;
    },
    exited,
    async stop(graceMs = 30_000) {
      if (!gone) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw new Error(`sriovctl daemon exited at start: ${log}`);
    // served by this daemon, not by one still draining on the same path
    const q = existsSync(socket) ? await queryDaemon(socket, 1000) : null;
    if (q?.serving && q.stats.pid === child.pid) return d;
    if (Date.now() > deadline) {
      await d.stop(1000);
      throw new Error(`sriovctl daemon did not serve ${socket} within ${timeoutMs} ms: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * For a test file: `daemon(env, prefix)` starts a daemon on `socket()` (the test's own path), and every daemon a
 * test started is stopped after it.
 */
export function useDaemons(socket: () => string): (env?: Record<string, string>, prefix?: string[]) => Promise<DaemonProcess> {
  let started: DaemonProcess[] = [];
  afterEach(async () => {
    for (const d of started) await d.stop(5000);
    started = [];
  });
  return async (env = {}, prefix = []) => {
    const d = await startDaemon(socket(), env, 30_000, prefix);
    started.push(d);
    return d;
  };
}

