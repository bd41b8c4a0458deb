// `sriovctl daemon`'s server: a root-only unix socket whose every connection is one CNI call, run through the
// one-shot plugin's own code (./run-request.ts). Each connection is greeted at once with a verdict: GO (send the
// request), or — for a caller in another network namespace (its NICs' home is not ours), a full daemon, a caller
// that is not root — a refusal before anything is read, so the shim runs the one-shot plugin instead.
// Requests run as they arrive, at once: each has its own session, logger and environment, and the engine's per-NIC
// locks keep two calls off one NIC (ADD and DEL wait for a lock another call of this daemon or another process holds
// as the one-shot plugin waits, but asleep, not on this thread: see lockNicWaiting). The engine's netlink and file work
// is synchronous, so calls overlap where they wait — an IPAM plugin running, a delegate — not inside a NIC's move,
// which the kernel serializes anyway (RTNL). Reading and replying never wait on each other: a client that stalls
// half-way holds only its own connection, and only until its deadline.
import { lstatSync, statSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { CNI_ERR, CniError, errorObject } from '../cni/errors';
import { LATEST_VERSION } from '../cni/versions';
import { native } from '../native';
import { searchOnWorkerThread, stopSearchThread } from '../lend/namespace-search-thread';
import { readRequest } from './connection';
import { runRequest } from './run-request';
import { prepareSocketPath } from './socket-path';
import { encodeHello, encodeReply, RequestKind, Verdict, type DaemonReply, type DaemonRequest } from './wire';

export interface DaemonOptions {
  socket: string;
  /** One line per request and per refusal (the daemon logs to stderr). */
  log(line: string): void;
  /** Connections open at once (each holds at most one request: ~1.3 MiB); more are declined. Default 32. */
  maxConnections?: number;
  /** A connection's whole request must arrive within this (the shim reads stdin for up to 30 s). Default 40 s. */
  requestDeadlineMs?: number;
}

/** What `sriovctl status` shows (a contract: `status --json` prints it as `daemon`). */
export interface DaemonStats {
  pid: number;
  socket: string;
  startedAt: string;
  uptimeSeconds: number;
  /** CNI requests run, by verb, and how many of them failed (exit code ≠ 0). */
  requests: { total: number; failed: number; byVerb: Record<string, number> };
  /** Connections sent back to the one-shot plugin (another namespace, full) or refused (not root). */
  declined: number;
  refused: number;
  /** Connections dropped for a malformed or incomplete request. */
  broken: number;
  inFlight: number;
  /** Connections greeted and not yet answered (their request still arriving, waiting its turn, or running). */
  connections: number;
  /** The process's resident set and V8 heap in use, MiB. */
  memory: { rss: number; heapTotal: number; heapUsed: number; external: number };
}

export class Daemon {
  private readonly server: Server;
  private readonly started = Date.now();
  private readonly ownNetns: string;
  private inode = 0;
  private open = 0;
  /** CNI requests taken and not yet answered. */
  private pending = 0;
  private draining: Promise<void> | null = null;
  private drained: (() => void) | null = null;
  private readonly stats = { total: 0, failed: 0, byVerb: {} as Record<string, number>, declined: 0, refused: 0, broken: 0 };

  private constructor(private readonly opts: Required<DaemonOptions>) {
    this.ownNetns = netnsId(process.pid);
    this.server = createServer({ allowHalfOpen: true }, (sock) => this.accept(sock));
  }

  /** Listening on `opts.socket` (0600, its directory 0700). */
  static async start(options: DaemonOptions): Promise<Daemon> {
    const d = new Daemon({ maxConnections: 32, requestDeadlineMs: 40_000, ...options });
    // a search through other containers' directories must not hold up every other call
    searchOnWorkerThread();
    await prepareSocketPath(d.opts.socket);
    const umask = process.umask(0o177); // the socket is born 0600: no window in which another user may connect
    try {
      await new Promise<void>((resolve, reject) => {
        d.server.once('error', reject);
        d.server.listen(d.opts.socket, () => {
          d.server.off('error', reject);
          resolve();
        });
      });
    } finally {
      process.umask(umask);
    }
    d.inode = lstatSync(d.opts.socket).ino;
    return d;
  }

  snapshot(): DaemonStats {
    const s = this.stats;
    return {
      pid: process.pid,
      socket: this.opts.socket,
      startedAt: new Date(this.started).toISOString(),
      uptimeSeconds: Math.floor((Date.now() - this.started) / 1000),
      requests: { total: s.total, failed: s.failed, byVerb: { ...s.byVerb } },
      declined: s.declined,
      refused: s.refused,
      broken: s.broken,
      inFlight: this.pending,
      connections: this.open,
      memory: memoryMiB(),
    };
  }

  /**
   * Stops accepting (the socket file is removed, so a new daemon may bind it at once) and resolves when every
   * request already greeted has been answered.
   */
  stop(): Promise<void> {
    if (this.draining) return this.draining;
    this.server.close();
    void stopSearchThread();
    try {
      if (lstatSync(this.opts.socket).ino === this.inode) unlinkSync(this.opts.socket);
    } catch {
      // gone already
    }
    this.draining = new Promise((resolve) => {
      this.drained = resolve;
    });
    this.maybeDrained();
    return this.draining;
  }

  /** Connections taken and not yet answered. */
  get inFlight(): number {
    return this.open;
  }

  private maybeDrained(): void {
    if (this.draining && this.open === 0) this.drained?.();
  }

  private accept(sock: Socket): void {
    sock.on('error', () => {}); // a client gone away: its own loss, reported where it is noticed
    const verdict = this.verdictFor(sock);
    if (verdict !== Verdict.go) {
      // closed once the verdict is out, whatever the client does next
      sock.end(encodeHello(verdict), () => sock.destroy());
      return;
    }
    sock.write(encodeHello(verdict));
    this.open++;
    void this.serve(sock).finally(() => {
      this.open--;
      this.maybeDrained();
    });
  }

  private verdictFor(sock: Socket): Verdict {
    let peer: { pid: number; uid: number };
    try {
      peer = native.peerCred((sock as unknown as { _handle: { fd: number } })._handle.fd);
    } catch (err) {
      this.stats.refused++;
      this.opts.log(`refused a connection: no peer credentials (${(err as Error).message})`);
      return Verdict.refused;
    }
    if (peer.uid !== 0) {
      this.stats.refused++;
      this.opts.log(`refused pid ${peer.pid}: uid ${peer.uid} is not root`);
      return Verdict.refused;
    }
    if (this.draining || this.open >= this.opts.maxConnections) {
      this.stats.declined++;
      return Verdict.decline;
    }
    // the caller's namespace is its NICs' home: one that is not ours is served by the one-shot plugin, in it
    let theirs: string;
    try {
      theirs = netnsId(peer.pid);
    } catch {
      theirs = '';
    }
    if (theirs !== this.ownNetns) {
      this.stats.declined++;
      return Verdict.decline;
    }
    return Verdict.go;
  }

  private async serve(sock: Socket): Promise<void> {
    let req: DaemonRequest;
    try {
      req = await readRequest(sock, this.opts.requestDeadlineMs);
    } catch (err) {
      this.stats.broken++;
      this.opts.log(`dropped a connection: ${(err as Error).message}`);
      sock.destroy();
      return;
    }
    const reply = req.kind === RequestKind.status ? this.statusReply() : await this.runCounted(req);
    // closed once the reply is with the kernel — a client still sending a body we refused to read must not keep
    // the connection — or at the deadline, for one that will not read it
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => sock.destroy(), this.opts.requestDeadlineMs);
      sock.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      sock.end(encodeReply(reply), () => sock.destroy());
    });
  }

  private statusReply(): DaemonReply {
    return { exitCode: 0, stdout: JSON.stringify(this.snapshot()) + '\n', stderr: '' };
  }

  private async runCounted(req: DaemonRequest): Promise<DaemonReply> {
    this.pending++;
    try {
      return await this.runLogged(req);
    } finally {
      this.pending--;
    }
  }

  private async runLogged(req: DaemonRequest): Promise<DaemonReply> {
    const t0 = performance.now();
    const verb = String(req.env.CNI_COMMAND ?? '?').slice(0, 16);
    const reply = await runRequest(req).catch((err: Error) => internalError(err));
    const s = this.stats;
    s.total++;
    s.byVerb[verb] = (s.byVerb[verb] ?? 0) + 1;
    if (reply.exitCode !== 0) s.failed++;
    const who = req.env.CNI_CONTAINERID ? ` ${req.env.CNI_CONTAINERID.slice(0, 64)}/${(req.env.CNI_IFNAME ?? '').slice(0, 16)}` : '';
    this.opts.log(`${verb}${who}: exit ${reply.exitCode} in ${(performance.now() - t0).toFixed(1)} ms`);
    return reply;
  }
}

function memoryMiB(): DaemonStats['memory'] {
  const m = process.memoryUsage();
  const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
  return { rss: mib(m.rss), heapTotal: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external) };
}

/** A network namespace's identity (device:inode of its nsfs file) as seen through /proc/<pid>/ns/net. */
function netnsId(pid: number): string {
  const st = statSync(`/proc/${pid}/ns/net`);
  return `${st.dev}:${st.ino}`;
}

/** runCni answers every failure itself; anything escaping it is a bug, answered as the plugin answers one. */
function internalError(err: Error): DaemonReply {
  const e = new CniError(CNI_ERR.INTERNAL, `internal error: ${err.message}`, '');
  return { exitCode: 1, stdout: JSON.stringify(errorObject(LATEST_VERSION, e)) + '\n', stderr: `${err.stack ?? err.message}\n` };
}
