// `sriovctl daemon`'s server: a root-only unix socket whose every connection is one CNI call, run through the
// one-shot plugin's own code (./run-request.ts). Each connection is greeted at once with a verdict: GO (send the
// request), or — for a caller that could not do the work itself (./peer-trust.ts: another user or network
// namespace, no CAP_NET_ADMIN and CAP_SYS_ADMIN), a full daemon, a caller that is not root — a refusal before anything
// is read, so the shim runs the one-shot plugin instead, with the caller's own privileges. A call is run with the CNI
// variables the caller sent and the daemon's own configuration (./caller-env.ts); one that asks for another state
// dir, sysfs root, log dirs or plugin dirs — or, from a caller whose view of paths is not the daemon's, names a path
// that is another file in its root (./caller-paths.ts) — is sent back unrun, and the shim runs the one-shot on it.
// Requests run as they arrive, at once: each has its own session, logger and environment, and the engine's per-NIC
// locks keep two calls off one NIC (ADD and DEL wait for a lock another call of this daemon or another process holds
// as the one-shot plugin waits, but asleep, not on this thread: see lockNicWaiting). The engine's netlink and file work
// is synchronous, so calls overlap where they wait — an IPAM plugin running, a delegate — not inside a NIC's move,
// which the kernel serializes anyway (RTNL). Reading and replying never wait on each other: a client that stalls
// half-way holds only its own connection, and only until its deadline.
import { closeSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { CNI_ERR, CniError, errorObject } from '../cni/errors';
import { LATEST_VERSION } from '../cni/versions';
import { carrierWatches, lateCarrierAnnouncements } from '../cni/late-carrier';
import { AbandonedSweep, type SweepReport } from './abandoned-sweep';
import { admitCall, ipamTypeOf, type DaemonCallConfig } from './caller-env';
import { searchOnWorkerThread, stopSearchThread } from '../lend';
import { readRequest } from './connection';
import { callPathNotShared } from './caller-paths';
import { judgePeer, servedNamespaces, type NamespaceIds } from './peer-trust';
import { runRequest } from './run-request';
import { embeddedSearchWorker } from './search-worker-source';
import { serveOthersWhileWaiting } from '../util/wait';
import { prepareSocketPath } from './socket-path';
import { encodeHello, encodeReply, encodeSentBack, RequestKind, StdinState, Verdict, type DaemonReply, type DaemonRequest } from './wire';

export interface DaemonOptions {
  socket: string;
  /** One line per request and per refusal (the daemon logs to stderr). */
  log(line: string): void;
  /**
   * Connections served at once (each holds at most one request: ~1.3 MiB). Default 32. A connection past them waits
   * for its greeting — it sends nothing before it, so it holds no request — until one of them ends.
   */
  maxConnections?: number;
  /** Connections that may wait so; past them, a connection is declined (the shim runs the one-shot plugin). Default 1024. */
  maxWaiting?: number;
  /** A connection's whole request must arrive within this (the shim reads stdin for up to 30 s). Default 40 s. */
  requestDeadlineMs?: number;
  /** Where calls act (state dir, sysfs root, log and plugin dirs): daemonCallConfig of the daemon's environment. */
  callConfig: DaemonCallConfig;
  /** Told of every call that ended, with how many others are in flight (the memory bound's collections). */
  afterCall?: (inFlight: () => number) => void;
}

/** What `sriovctl status` shows (a contract: `status --json` prints it as `daemon`). */
export interface DaemonStats {
  pid: number;
  socket: string;
  startedAt: string;
  uptimeSeconds: number;
  /** CNI requests run, by verb, and how many of them failed (exit code ≠ 0). */
  requests: { total: number; failed: number; byVerb: Record<string, number> };
  /**
   * Connections sent back to the one-shot plugin (a caller that could not do the work itself, a call asking for
   * another configuration, a full daemon) or refused (not root).
   */
  declined: number;
  refused: number;
  /** Connections dropped for a malformed or incomplete request. */
  broken: number;
  inFlight: number;
  /** Connections greeted and not yet answered (their request still arriving, waiting its turn, or running). */
  connections: number;
  /** Connections not greeted yet: waiting for one of the connections served at once to end. */
  waiting: number;
  /** Pod interfaces answered before their carrier came, watched to announce their addresses when it does. */
  carrierWatches: number;
  /**
   * The give-back of abandoned CNI attachments (./abandoned-sweep.ts): its interval (0: off), the records its sweeps
   * gave back since start, and its last sweep.
   */
  sweep: { everySeconds: number; gaveBack: number; last: SweepReport | null };
  /** The process's resident set and V8 heap in use, MiB. */
  memory: { rss: number; heapTotal: number; heapUsed: number; external: number };
}

/** A connection past those served at once, waiting for its greeting. */
interface Waiter {
  sock: Socket;
  root: number | null;
  /** Its waiting listeners removed (greeted, declined or dropped). */
  detach(): void;
}

export class Daemon {
  private readonly server: Server;
  private readonly started = Date.now();
  /** The namespaces a caller must be in (the daemon's own). */
  private readonly served: NamespaceIds;
  private inode = 0;
  private open = 0;
  /** Connections past maxConnections, in arrival order, greeted when a served one ends. */
  private readonly waiting: Waiter[] = [];
  /** CNI requests taken and not yet answered. */
  private pending = 0;
  private draining: Promise<void> | null = null;
  private drained: (() => void) | null = null;
  /** Gives back abandoned CNI attachments; null when SRIOVCTL_DAEMON_SWEEP_S is 0. */
  private readonly sweeper: AbandonedSweep | null;
  private readonly stats = { total: 0, failed: 0, byVerb: {} as Record<string, number>, declined: 0, refused: 0, broken: 0 };

  private constructor(private readonly opts: Required<DaemonOptions>) {
    this.served = servedNamespaces();
    this.server = createServer({ allowHalfOpen: true }, (sock) => this.accept(sock));
    const sweep = opts.callConfig.config.daemonSweep ?? { everyMs: 0 };
    if ('invalid' in sweep) throw new Error(sweep.invalid);
    this.sweeper = sweep.everyMs > 0 ? new AbandonedSweep(opts.callConfig, sweep.everyMs, opts.log) : null;
  }

  /** Listening on `opts.socket` (0600, its directory 0700). */
  static async start(options: DaemonOptions): Promise<Daemon> {
    const d = new Daemon({ maxConnections: 32, maxWaiting: 1024, requestDeadlineMs: 40_000, afterCall: () => {}, ...options });
    // a search through other containers' directories must not hold up every other call
    searchOnWorkerThread(embeddedSearchWorker());
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
    // an ADD answers without waiting for a carrier the pod does not need; its addresses are announced when it comes
    lateCarrierAnnouncements(d.opts.log);
    // every call's waits for the kernel and its rtnetlink requests leave this thread to the others
    serveOthersWhileWaiting(true);
    // NICs whose DEL was lost while no daemon served (or ever) go home without waiting for an ADD or a person
    d.sweeper?.start();
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
      waiting: this.waiting.length,
      carrierWatches: carrierWatches(),
      sweep: { everySeconds: (this.sweeper?.everyMs ?? 0) / 1000, gaveBack: this.sweeper?.gaveBack ?? 0, last: this.sweeper?.last ?? null },
      memory: memoryMiB(),
    };
  }

  /**
   * Stops accepting (the socket file is removed, so a new daemon may bind it at once) and sweeping, and resolves when
   * every request already greeted has been answered and a sweep under way has finished its release.
   */
  stop(): Promise<void> {
    if (this.draining) return this.draining;
    this.server.close();
    void stopSearchThread();
    lateCarrierAnnouncements(null);
    serveOthersWhileWaiting(false);
    // a connection still waiting for its greeting has sent nothing: its shim runs the one-shot plugin
    for (const w of this.waiting.splice(0)) {
      w.detach();
      this.stats.declined++;
      this.decline(w.sock);
    }
    try {
      if (lstatSync(this.opts.socket).ino === this.inode) unlinkSync(this.opts.socket);
    } catch {
      // gone already
    }
    const answered = new Promise<void>((resolve) => {
      this.drained = resolve;
    });
    this.draining = Promise.all([answered, this.sweeper?.stop()]).then(() => undefined);
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
    const { verdict, root } = this.verdictFor(sock);
    if (verdict !== Verdict.go) return this.decline(sock, verdict);
    if (this.open < this.opts.maxConnections) return this.greet(sock, root);
    // a node booting with many pods asks for all their ADDs at once: each waits its turn here rather than running
    // one-shot (a Node start-up each, all on the same cores). A client waiting for its greeting sends nothing: its
    // end means it gave up (its shim runs the one-shot plugin) and it is dropped; bytes before the greeting break the
    // protocol
    const drop = () => {
      waiter.detach();
      const i = this.waiting.indexOf(waiter);
      if (i >= 0) this.waiting.splice(i, 1);
      sock.destroy();
    };
    const onData = () => {
      this.stats.broken++;
      drop();
    };
    const waiter: Waiter = { sock, root, detach: () => void sock.off('data', onData).off('end', drop).off('close', drop) };
    sock.on('data', onData).on('end', drop).on('close', drop);
    this.waiting.push(waiter);
  }

  /** The verdict, and closed once it is out, whatever the client does next. */
  private decline(sock: Socket, verdict: Verdict = Verdict.decline): void {
    sock.end(encodeHello(verdict), () => sock.destroy());
  }

  private greet(sock: Socket, root: number | null): void {
    sock.write(encodeHello(Verdict.go));
    this.open++;
    void this.serve(sock, root).finally(() => {
      this.open--;
      this.greetWaiting();
      this.maybeDrained();
    });
  }

  private greetWaiting(): void {
    while (this.open < this.opts.maxConnections && this.waiting.length && !this.draining) {
      const next = this.waiting[0];
      // out of the queue, its listeners off: readRequest listens from here on, in this same tick
      next.detach();
      this.waiting.shift();
      if (!next.sock.destroyed) this.greet(next.sock, next.root);
    }
  }

  /**
   * The greeting's verdict; root: a descriptor of the root of a caller whose view of paths is not the daemon's (its
   * calls' paths checked there), held until the connection closes.
   */
  private verdictFor(sock: Socket): { verdict: Verdict; root: number | null } {
    const peer = judgePeer((sock as unknown as { _handle: { fd: number } })._handle.fd, this.served);
    const root = peer.serve ? peer.root : null;
    if (root !== null) sock.once('close', () => closeSync(root));
    const not = (verdict: Verdict) => ({ verdict, root: null });
    if (!peer.serve && peer.refused) {
      this.stats.refused++;
      this.opts.log(`refused ${peer.reason}`);
      return not(Verdict.refused);
    }
    if (this.draining || (this.open >= this.opts.maxConnections && this.waiting.length >= this.opts.maxWaiting)) {
      this.stats.declined++;
      return not(Verdict.decline);
    }
    if (peer.serve) return { verdict: Verdict.go, root };
    this.stats.declined++;
    this.opts.log(`sent a caller to the one-shot plugin: ${peer.reason}`);
    return not(Verdict.decline);
  }

  private async serve(sock: Socket, root: number | null): Promise<void> {
    let req: DaemonRequest;
    try {
      req = await readRequest(sock, this.opts.requestDeadlineMs);
    } catch (err) {
      this.stats.broken++;
      this.opts.log(`dropped a connection: ${(err as Error).message}`);
      sock.destroy();
      return;
    }
    const reply = req.kind === RequestKind.status ? encodeReply(this.statusReply()) : await this.admitted(req, root);
    // closed once the reply is with the kernel — a client still sending a body we refused to read must not keep
    // the connection — or at the deadline, for one that will not read it
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => sock.destroy(), this.opts.requestDeadlineMs);
      sock.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      sock.end(reply, () => sock.destroy());
    });
  }

  /**
   * The call run with the environment the daemon admits, or sent back (the frame) when it asks for a configuration
   * not the daemon's. A call whose stdin was cut short cannot be replayed by the shim: it runs with the daemon's own
   * configuration, where it fails on its stdin before anything else is read, as it would one-shot.
   */
  private async admitted(req: DaemonRequest, root: number | null): Promise<Buffer> {
    let admission = admitCall(req.env, this.opts.callConfig, ipamTypeOf(req.stdin));
    // resolved in the caller's root as it was when the caller was judged (the descriptor holds it)
    const unshared = admission.admitted && root !== null ? callPathNotShared(admission.env, `/proc/self/fd/${root}`) : null;
    if (unshared !== null) admission = { admitted: false, reason: `${unshared} is not the same file in the caller's root as in the daemon's`, env: admission.env };
    if (admission.admitted) return encodeReply(await this.runCounted({ ...req, env: admission.env }));
    if (req.stdinState === StdinState.read || req.stdinState === StdinState.notRead) {
      this.stats.declined++;
      this.opts.log(`sent a call back to the one-shot plugin: ${admission.reason}`);
      return encodeSentBack(admission.reason);
    }
    return encodeReply(await this.runCounted({ ...req, env: admission.env }));
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
      this.opts.afterCall(() => this.pending);
    }
  }

  private async runLogged(req: DaemonRequest): Promise<DaemonReply> {
    const t0 = performance.now();
    const verb = String(req.env.CNI_COMMAND ?? '?').slice(0, 16);
    const reply = await runRequest(req, this.opts.callConfig.config).catch((err: Error) => internalError(err));
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

/** runCni answers every failure itself; anything escaping it is a bug, answered as the plugin answers one. */
function internalError(err: Error): DaemonReply {
  const e = new CniError(CNI_ERR.INTERNAL, `internal error: ${err.message}`, '');
  return { exitCode: 1, stdout: JSON.stringify(errorObject(LATEST_VERSION, e)) + '\n', stderr: `${err.stack ?? err.message}\n` };
}
