// Global setup of the vitest project `cni-shim`: one daemon for the whole CNI suite's second run, on the socket
// the project's environment names (each call carries its own state dir and sysfs root, as it would one-shot).
// A daemon that died during the suite, or served no ADD (every call fell back to the one-shot plugin), fails the run.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { startDaemon } from './daemon-process';

/** The part of vitest's TestProject this setup reads. */
interface Project {
  config: { env: Record<string, string | undefined> };
}

export default async function setup(project: Project): Promise<() => Promise<void>> {
  const socket = project.config.env.SRIOVCTL_SOCKET;
  if (!socket) throw new Error('the cni-shim project sets SRIOVCTL_SOCKET');
  mkdirSync(dirname(socket), { recursive: true, mode: 0o700 });
  const daemon = await startDaemon(socket);
  return async () => {
    const early = await Promise.race([daemon.exited, new Promise<null>((r) => setTimeout(() => r(null), 0))]);
    const served = early ? null : await daemon.stats().catch(() => null);
    const end = await daemon.stop();
    rmSync(dirname(socket), { recursive: true, force: true });
    if (early) throw new Error(`the suite's daemon died during the run (${JSON.stringify(early)}): ${daemon.log()}`);
    // the second run went through the daemon, not (all) through the shim's fallback
    if (!served?.requests.byVerb.ADD) throw new Error(`the suite's daemon served no ADD: ${JSON.stringify(served)}`);
    if (end.code !== 0) throw new Error(`the suite's daemon did not drain and exit 0 on SIGTERM (${JSON.stringify(end)}): ${daemon.log()}`);
  };
}
