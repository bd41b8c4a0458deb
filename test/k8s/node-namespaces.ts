// The node's own mount and pid namespaces, where containerd and kubelet (and so every shim, runc and pod) run.
//
// Mount: a copy of the host's whose root mount is shared, as on a systemd host. Here PID 1 is not systemd and / is
// private, and containerd 1.6 refuses a container with a HostToContainer mount (the installer DaemonSet's
// /var/run/netns) whose source lies on a private mount: it looks the literal path up in mountinfo, and /var/run is a
// symlink, so it finds / rather than the shared /run/netns. The copy keeps the host's /run/netns in its peer group,
// so pod netns bind mounts reach the host (and `ip -n`).
//
// Pid: a namespace of its own, with its own /proc in the node's mount namespace, whose pid 1 is tini (stays up,
// reaps the shims containerd orphans). This machine's pid 1 is the sandbox's init, whose ptrace-protected /proc/1
// entries (ns/*, root, exe) are denied even to root with every capability; a hostPID pod (the DaemonSet's
// `sriovctl daemon`, which learns the host's namespaces from /proc/1) must see a pid 1 it can examine, as a real
// node's systemd or init is.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { mountPoints, which } from '../field/containerd';
import { Component } from './processes';

export class NodeNamespaces {
  private readonly mountNsFile: string;
  private readonly pidNsFile: string;
  private init: Component | null = null;

  constructor(private readonly dir: string) {
    this.mountNsFile = `${dir}/node-mnt-ns`;
    this.pidNsFile = `${dir}/node-pid-ns`;
  }

  /**
   * The command prefix that runs a program in the node's namespaces. nsenter does not fork (-F): tini does, so the
   * program is in the node's pid namespace while tini, outside it, passes every signal on and exits as it exits.
   */
  get launcher(): string[] {
    return [which('nsenter'), `--mount=${this.mountNsFile}`, `--pid=${this.pidNsFile}`, '-F', '--', which('tini'), '-s', '--'];
  }

  async create(): Promise<void> {
    // iproute2 makes /run/netns a shared mount of its own the first time it adds a namespace
    const probe = `k8s${process.pid.toString(16)}${Date.now().toString(16)}`;
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'pipe' });
    writeFileSync(this.mountNsFile, '');
    execFileSync('unshare', [`--mount=${this.mountNsFile}`, '--propagation', 'unchanged', 'true'], { stdio: 'pipe' });
    execFileSync('nsenter', [`--mount=${this.mountNsFile}`, '--', 'mount', '--make-shared', '/'], { stdio: 'pipe' });

    // pid 1 of the new namespace mounts its /proc over the node's, then becomes tini; when unshare dies (stop()),
    // --kill-child kills tini and with it every process of the namespace
    writeFileSync(this.pidNsFile, '');
    this.init = new Component('node-init', [
      which('unshare'), `--pid=${this.pidNsFile}`, '--fork', '--kill-child',
      which('nsenter'), `--mount=${this.mountNsFile}`, '--',
      'sh', '-c', 'mount -t proc proc /proc && exec "$0" -s -- sleep infinity', which('tini'),
    ], `${this.dir}/node-init.log`);
    this.init.start();
    for (let i = 0; ; i++) {
      if (mountPoints().includes(this.pidNsFile) && this.nodeInitComm() === 'tini') return;
      if (!this.init.running) throw new Error(`the node's pid namespace did not start:\n${this.init.logTail()}`);
      if (i > 500) throw new Error(`the node's pid 1 was not tini after 10 s:\n${this.init.logTail()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** What the node's /proc shows as pid 1 (null while it is not mounted yet). */
  private nodeInitComm(): string | null {
    try {
      return execFileSync('nsenter', [`--mount=${this.mountNsFile}`, '--', 'cat', '/proc/1/comm'], { encoding: 'utf8', stdio: 'pipe' }).trim();
    } catch {
      return null;
    }
  }

  /** Every process of the pid namespace killed (and gone), both namespace files released. */
  async release(): Promise<void> {
    if (this.init) {
      // unshare ignores SIGTERM while it waits for its child: SIGKILL it, and --kill-child takes the namespace down
      await this.init.stop('SIGKILL');
      const ns = this.pidNsId();
      for (let i = 0; ns && processesIn(ns).length > 0; i++) {
        if (i > 500) throw new Error(`processes of the node's pid namespace still alive: ${processesIn(ns).join(' ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    for (const f of [this.pidNsFile, this.mountNsFile]) if (mountPoints().includes(f)) execFileSync('umount', [f], { stdio: 'pipe' });
  }

  /** The host pid of the node's process `nodePid` (a pid as the node's containerd and runc report it). */
  hostPid(nodePid: number): number {
    const ns = this.pidNsId();
    const found = ns ? processesIn(ns).find((pid) => nsPids(pid).at(-1) === nodePid) : undefined;
    if (found === undefined) throw new Error(`no process of the node's pid namespace is its pid ${nodePid}`);
    return found;
  }

  /** `pid:[inode]` of the node's pid namespace, as /proc/<pid>/ns/pid links read (null if never bound). */
  private pidNsId(): string | null {
    if (!mountPoints().includes(this.pidNsFile)) return null;
    return `pid:[${statSync(this.pidNsFile).ino}]`;
  }
}

/** A process's pids from the host's pid namespace inward (its status's NSpid). */
function nsPids(pid: number): number[] {
  try {
    const line = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? line[1].trim().split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** Host pids of the processes in pid namespace `ns` (`pid:[inode]`); those this process may not examine are skipped. */
function processesIn(ns: string): number[] {
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/ns/pid`) === ns && !/^State:\s+Z/m.test(readFileSync(`/proc/${e}/status`, 'utf8'))) pids.push(Number(e));
    } catch {
      // gone, or pid 1 of this machine
    }
  }
  return pids;
}
