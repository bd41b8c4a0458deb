// The packaged executable serving as `sriovctl daemon` (argv[0] `sriovctl`), with no PATH: started, waited for,
// asked for its counts, stopped with SIGTERM (it must drain and exit 0).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { queryDaemon } from '../../src/daemon/query';
import type { DaemonStats } from '../../src/daemon/server';

export interface PackagedDaemon {
  stats(): Promise<DaemonStats>;
  log(): string;
  /** SIGTERM (SIGKILL after 60 s); its exit code. */
  stop(): Promise<number | null>;
}

export async function startPackagedDaemon(file: string, env: Record<string, string> & { SRIOVCTL_SOCKET: string }): Promise<PackagedDaemon> {
  const socket = env.SRIOVCTL_SOCKET;
  const child = spawn(file, ['daemon'], { argv0: 'sriovctl', env: { PATH: '/nonexistent', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-64 * 1024)));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const d: PackagedDaemon = {
    async stats() {
      const s = await queryDaemon(socket);
      if (!s.serving) throw new Error(s.reason);
      return s.stats;
    },
    log: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  for (let i = 0; ; i++) {
    if (existsSync(socket) && (await queryDaemon(socket, 1000)).serving) return d;
    if (i > 1200 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`${file} daemon did not serve ${socket}: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
