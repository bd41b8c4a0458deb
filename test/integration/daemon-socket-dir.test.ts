// The daemon's socket directory as a node gives it: kubelet's DirectoryOrCreate hostPath (the installer DaemonSet's
// /run/sriovctl) makes it root's, mode 0755. The daemon makes such a directory its own alone (0700) and serves; one
// that others may write to stays refused, untouched.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEST_DAEMON_ENV, useDaemons } from '../helpers/daemon-process';

const CLI = join(__dirname, '..', '..', 'bin', 'sriovctl.js');
let root: string;
let socketDir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sriovctl-sockdir-'));
  socketDir = join(root, 'sriovctl');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));
const daemon = useDaemons(() => join(socketDir, 'cni.sock'));

/** mkdir `dir` with exactly `mode` (as kubelet's MkdirAll, whatever the umask). */
function dirWithMode(dir: string, mode: number): void {
  mkdirSync(dir);
  spawnSync('chmod', [mode.toString(8), dir]);
  expect(statSync(dir).mode & 0o7777).toBe(mode);
}

describe('sriovctl daemon on a socket directory it did not make', () => {
  it("serves from a root-owned 0755 one (kubelet's DirectoryOrCreate), made 0700 first", async () => {
    dirWithMode(socketDir, 0o755);
    const d = await daemon();
    expect((await d.stats()).pid).toBe(d.child.pid);
    expect(statSync(socketDir).mode & 0o7777).toBe(0o700);
  });

  it('refuses a group-writable one, naming it, and leaves its mode', () => {
    dirWithMode(socketDir, 0o775);
    const r = spawnSync(process.execPath, [CLI, 'daemon'], {
      env: { PATH: process.env.PATH, SRIOVCTL_SOCKET: join(socketDir, 'cni.sock'), ...TEST_DAEMON_ENV },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect([r.status, r.stderr.trim()]).toEqual([1, `sriovctl: daemon: cannot serve: ${socketDir} is writable by group or others (mode 775)`]);
    expect(statSync(socketDir).mode & 0o7777).toBe(0o775);
  });
});
