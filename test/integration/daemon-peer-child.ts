// Run by daemon-peer-identity.test.ts as pid 1 of a private pid namespace (unshare --pid --fork --mount-proc), where
// nothing else takes pids: a daemon in this process, whose thread is held (spawnSync) while a caller connects and
// then changes — exits and has its pid handed to a process that could do the work (case `reused`), or moves to
// another network namespace (case `setns`) — or stays as it was (case `stays`), then let go to judge that connection. One JSON line on stdout: what
// the daemon made of it.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Daemon } from '../../src/daemon/server';
import { daemonCallConfig } from '../../src/daemon/caller-env';
import { native } from '../../src/native';

const CASES: Record<string, string> = {
  // a caller with no capabilities connects and exits; the kernel hands its very pid to a root process with every
  // capability, in the daemon's namespaces (ns_last_pid: no one else takes pids here)
  reused: `
    setpriv --inh-caps=-all --bounding-set=-all "$NODE" -e 'require("net").connect(process.argv[1]).on("connect", () => process.exit(0))' "$SOCK" &
    a=$!; wait $a
    for i in $(seq 50); do
      echo $((a - 1)) > /proc/sys/kernel/ns_last_pid
      sleep 600 </dev/null >/dev/null 2>&1 & b=$!
      [ "$b" = "$a" ] && break
      kill -9 $b; wait $b 2>/dev/null
    done
    echo "$a $b"`,
  // a root caller with every capability connects and stays: the one to serve (the check above must not decline it)
  stays: `
    python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(600)' "$SOCK" </dev/null >/dev/null 2>&1 &
    a=$!
    echo "$a $a"`,
  // a root caller with every capability connects from the daemon's network namespace, then leaves it for a new one
  setns: `
    python3 -c '
import ctypes, os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0: sys.exit(1)
print(os.getpid(), flush=True)
time.sleep(600)' "$SOCK" </dev/null >"$DIR/moved" 2>&1 &
    a=$!
    for i in $(seq 1000); do [ -s "$DIR/moved" ] && break; sleep 0.05; done
    echo "$a $(cat "$DIR/moved")"`,
};

async function main(which: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sriovctl-peer-'));
  const socket = join(dir, 'cni.sock');
  const log: string[] = [];
  const fromSocket = await peerPidfdFromSocket(join(dir, 'probe.sock'));
  const daemon = await Daemon.start({ socket, log: (l) => log.push(l), callConfig: daemonCallConfig(process.env) });
  const pids: number[] = [];
  try {
    // the daemon's thread is held here: the connection waits in the backlog until the caller has changed
    const r = spawnSync('bash', ['-c', CASES[which]], { env: { ...process.env, NODE: process.execPath, SOCK: socket, DIR: dir }, encoding: 'utf8', timeout: 60_000 });
    const [first, now] = r.stdout.trim().split(' ').map(Number);
    pids.push(first, now);
    if (r.status !== 0 || !(first > 0) || !(now > 0)) throw new Error(`case ${which} failed: ${r.status} ${r.stdout} ${r.stderr}`);
    // until the daemon has judged the connection (bounded)
    for (let i = 0; i < 2000; i++) {
      const st = daemon.snapshot();
      if (st.declined + st.refused + st.broken + st.connections > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const st = daemon.snapshot();
    process.stdout.write(JSON.stringify({ fromSocket, first, now, declined: st.declined, refused: st.refused, served: st.connections + st.broken, log }) + '\n');
  } finally {
    for (const pid of new Set(pids)) killIfThere(pid);
    await Promise.race([daemon.stop(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the kernel gives the peer's pidfd through the socket here (SO_PEERPIDFD), or the daemon falls back to pidfd_open. */
function peerPidfdFromSocket(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer((sock) => {
      try {
        const peer = native.peerPidfd((sock as unknown as { _handle: { fd: number } })._handle.fd);
        closeSync(peer.pidfd);
        resolve(peer.fromSocket);
      } catch (err) {
        reject(err);
      } finally {
        sock.destroy();
        client.destroy();
        server.close();
      }
    }).listen(path);
    const client = connect(path);
  });
}

function killIfThere(pid: number): void {
  if (!(pid > 1)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

main(process.argv[2]).then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
