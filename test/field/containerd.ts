// A private containerd for a test: its own root, state, socket and config under a temp dir, started by the test
// and stopped (with every mount under its root gone) at the end. `ctr` talks to it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './run-packaged';

export interface Containerd {
  dir: string;
  address: string;
  /** `ctr --address <ours> --namespace <ns> …`, stdout. */
  ctr(namespace: string, ...args: string[]): string;
  stop(): Promise<void>;
}

/** Starts containerd with `extraToml` appended to its config (the CRI section, say); the CRI is off unless asked. */
export async function startContainerd(opts: { cri?: boolean; extraToml?: string } = {}): Promise<Containerd> {
  const tmp = tempDir('containerd');
  const dir = tmp.dir;
  const address = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  writeFileSync(
    config,
    [
      'version = 2',
      `root = "${join(dir, 'root')}"`,
      `state = "${join(dir, 'state')}"`,
      opts.cri ? '' : 'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = "${address}"`,
      '[ttrpc]',
      `  address = "${address}.ttrpc"`,
      opts.extraToml ?? '',
    ].join('\n'),
  );
  mkdirSync(join(dir, 'root'));
  const log = join(dir, 'containerd.log');
  const child: ChildProcess = spawn('containerd', ['--config', config, '--log-level', 'info'], { stdio: ['ignore', 'ignore', 'ignore'], detached: false });
  execFileSync('true');
  const ctr = (namespace: string, ...args: string[]) =>
    execFileSync('ctr', ['--address', address, '--namespace', namespace, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => (clearTimeout(t), resolve()));
      });
    }
    unmountUnder(dir);
    tmp.remove();
  };
  // ready when it answers (a busy machine may take seconds)
  for (const end = Date.now() + 60_000; ; ) {
    try {
      if (existsSync(address)) {
        ctr('default', 'version');
        break;
      }
    } catch {
      // not yet
    }
    if (child.exitCode !== null || Date.now() > end) {
      const why = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : `exit ${child.exitCode}`;
      await stop();
      throw new Error(`containerd did not start: ${why}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { dir, address, ctr, stop };
}

/** Unmount (lazily) every mount point at or below `dir`, deepest first: snapshots and shm a run left. */
function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1])
    .filter((m) => m && (m === dir || m.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) {
    try {
      execFileSync('umount', ['-l', m]);
    } catch {
      // already gone
    }
  }
  rmSync(join(dir, 'root'), { recursive: true, force: true });
}
