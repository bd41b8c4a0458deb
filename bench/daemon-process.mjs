// `sriovctl daemon` for the benches that go through it: started on a socket, waited for until it serves.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv } from './bench-helpers.mjs';
import { CNI_DIR } from './cni-world.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { queryDaemon } = require(join(ROOT, 'dist', 'daemon', 'query.js'));
const CLI = join(ROOT, 'bin', 'sriovctl.js');

export async function startDaemon(socket) {
  // the bench's calls name their own state dir and sysfs root (below the temp dir) and Debian's plugins: the
  // daemon's configuration must admit them, or every call would be sent back to the one-shot plugin
  const env = benchEnv({ SRIOVCTL_SOCKET: socket, SRIOVCTL_DAEMON_CALLER_ROOT: tmpdir(), SRIOVCTL_DAEMON_CNI_PATH: CNI_DIR });
  // its own state dir, not the machine's: the daemon's sweep gives back the abandoned records it finds there
  const state = mkdtempSync(join(tmpdir(), 'sriovctl-bench-daemon-state-'));
  env.SRIOVCTL_STATE_DIR = state;
  // BENCH_DAEMON_CPU_PROF=<dir>: a CPU profile of the daemon, written when it exits (where its thread's time goes)
  const prof = process.env.BENCH_DAEMON_CPU_PROF;
  const node = prof ? ['--cpu-prof', '--cpu-prof-interval', process.env.BENCH_DAEMON_CPU_PROF_INTERVAL ?? '1000', '--cpu-prof-dir', prof] : [];
  const child = spawn(process.execPath, [...node, CLI, 'daemon'], { env, stdio: ['ignore', 'ignore', 'ignore'] });
  child.once('exit', () => rmSync(state, { recursive: true, force: true }));
  for (let i = 0; i < 600; i++) {
    if (existsSync(socket) && (await queryDaemon(socket, 1000)).serving) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`sriovctl daemon did not serve ${socket}`);
}
