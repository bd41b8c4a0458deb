// The daemon gives back, on its own, the CNI attachments whose DEL never came: a runtime that crashed, a meta-plugin
// that answered DEL without calling us (Multus thick's shim while its daemon is down). Their pod namespace is gone
// and the kernel has put each physical NIC back in the initial namespace under its pod name, but the record still
// holds it: until an ADD for that very NIC, or a person's `sriovctl cleanup`, the NIC keeps its pod name, MAC and
// MTU and none of its addresses. A sweep takes only records whose NIC was moved and is back, and whose namespace is
// surely gone (src/lend/abandoned.ts: searched for in full, each record with a search budget of its own) — never
// one whose namespace may still exist, whose search was cut short, or whose NIC is not back — and releases each as
// an ADD does (IPAM DEL, then the engine's give-back under the NIC's lock, which a NIC busy with a call fails at
// once: it is left for the next sweep). A NIC never moved (a VF on a userspace driver, lent to a pod by its PCI
// address) is where it always was, live pod or not: only the search for the pod's namespace could tell, a bounded
// search on a machine whose other containers' directories are anyone's, and a wrong answer hands a live pod's VF to
// the next one; those are left to ADD, GC and cleanup. Records of other owners (attach:, cluster:) are cleanup's. A
// sweep runs once at start, then every `everyMs` after the previous one ended, off every call's path: each step is
// as short as a call's, and at most MAX_PER_SWEEP records are released per sweep.
import { parseEnv, type CniEnv } from '../cni/env';
import { Logger, runWithLogger } from '../cni/log';
import { releaseRecord } from '../cni/release-attachment';
import { describeError } from '../cni/sys-errors';
import { openSession, ownerMatches, type LendRecord, type LendSession } from '../lend';
import type { DaemonCallConfig } from './caller-env';

/** Releases per sweep: each may run an IPAM plugin; what is past it waits for the next sweep. */
export const MAX_PER_SWEEP = 16;

/** The last sweep, as `sriovctl status --json` shows it. */
export interface SweepReport {
  /** When it started (ISO 8601) and how long it took. */
  at: string;
  ms: number;
  /** Lent CNI records looked at, and of them: given back, busy (left for the next sweep), failed. */
  examined: number;
  gaveBack: number;
  busy: number;
  failed: number;
  /** Lent CNI records not looked at: past MAX_PER_SWEEP releases, or the daemon stopping. */
  left: number;
  /** Why the ledger could not be read at all (an untrusted state dir), if so. */
  error?: string;
}

type Log = (line: string) => void;

export class AbandonedSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private lastReport: SweepReport | null = null;
  private total = 0;
  /** Records whose namespace's search was cut short, said once while it stays so (every sweep would say it again). */
  private readonly saidUnknown = new Set<string>();

  constructor(
    private readonly d: DaemonCallConfig,
    readonly everyMs: number,
    private readonly log: Log,
  ) {}

  get last(): SweepReport | null {
    return this.lastReport;
  }

  /** Records given back by every sweep since start. */
  get gaveBack(): number {
    return this.total;
  }

  /** The first sweep right after start-up, then one every `everyMs` after the previous one ended. */
  start(): void {
    this.schedule(0);
  }

  /** No sweep from now on; resolves when the one running, if any, has finished its current release. */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return this.running ?? Promise.resolve();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.sweep().finally(() => {
        this.running = null;
        this.schedule(this.everyMs);
      });
    }, ms);
    // the server keeps the process alive; a pending sweep must not keep a stopping one
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    const t0 = performance.now();
    const report: SweepReport = { at: new Date().toISOString(), ms: 0, examined: 0, gaveBack: 0, busy: 0, failed: 0, left: 0 };
    // the engine's lines below warning go nowhere, the outcome is logged here
    const logger = new Logger();
    logger.configure({ level: 'warning', file: null }, 'sweep: ', [], (text) => this.log(text.trimEnd()));
    try {
      await runWithLogger(logger, () => this.sweepWith(report));
    } catch (err) {
      report.error = describeError(err);
      this.log(`sweep: cannot read the ledger: ${report.error}`);
    } finally {
      logger.close();
    }
    report.ms = Math.round(performance.now() - t0);
    this.lastReport = report;
    this.total += report.gaveBack;
  }

  private async sweepWith(report: SweepReport): Promise<void> {
    // read without creating anything: a daemon on a machine that never lent a NIC makes no state dir
    const lent = (await this.inSession((s) => s.status())).records.filter((r) => r.phase === 'lent' && r.moved && ownerMatches(r.owner, { kind: 'pod' }));
    for (const key of this.saidUnknown) if (!lent.some((r) => r.key === key)) this.saidUnknown.delete(key);
    for (const [i, record] of lent.entries()) {
      if (this.stopped || report.gaveBack + report.busy + report.failed >= MAX_PER_SWEEP) {
        report.left = lent.length - i;
        this.log(`sweep: ${report.left} lent CNI record(s) left for the next sweep`);
        return;
      }
      report.examined++;
      // a session, and so a search budget, per record (a long-lived process must not keep a namespace alive either):
      // the searches for earlier records' namespaces (gone: read to the end) must not spend what this one's may read
      await this.inSession((s) => this.releaseIfAbandoned(s, record, report));
    }
  }

  /** A session of its own (see sweepWith), its handles of other namespaces closed after each engine call too. */
  private async inSession<T>(fn: (s: LendSession) => T | Promise<T>): Promise<T> {
    const s = openSession(this.d.config);
    try {
      return await fn(s);
    } finally {
      s.close();
    }
  }

  private async releaseIfAbandoned(s: LendSession, record: LendRecord, report: SweepReport): Promise<void> {
    const who = `${record.key} of ${record.owner}`;
    try {
      // a search of the machine for its namespace runs on the search thread, not on the one serving calls
      const verdict = await s.readOnly(() => s.abandonment(record));
      if (verdict === 'unknown') this.sayUnknown(record, who, s);
      else this.saidUnknown.delete(record.key);
      if (verdict !== 'abandoned') return;
    } catch (err) {
      report.failed++;
      this.log(`sweep: cannot tell whether ${who} is abandoned: ${describeError(err)}`);
      return;
    }
    const outcome = await releaseRecord(s, record, this.envOf(), this.d.config.stateDir, 'sweep');
    switch (outcome.released) {
      case 'given-back': {
        report.gaveBack++;
        const warnings = outcome.result.warnings.length ? ` (${outcome.result.warnings.join('; ')})` : '';
        this.log(`sweep: ${who}: its namespace is gone and its NIC back: gave it back: ${outcome.result.outcome}${warnings}`);
        return;
      }
      case 'not-lent':
        // given back by its DEL, or taken by another attachment's ADD, since the ledger was read: not this sweep's
        this.log(`sweep: ${who}: no longer lent to it (given back or taken meanwhile): nothing to give back`);
        return;
      case 'busy':
        report.busy++;
        this.log(`sweep: ${who} is abandoned but busy (another operation holds its NIC): left for the next sweep`);
        return;
      case 'failed':
        report.failed++;
        this.log(`sweep: ${who} is abandoned; giving it back failed: ${outcome.error}`);
    }
  }

  private sayUnknown(record: LendRecord, who: string, s: LendSession): void {
    if (this.saidUnknown.has(record.key)) return;
    this.saidUnknown.add(record.key);
    const skipped = s.search.skipped;
    const why = skipped.length ? `: ${skipped.slice(0, 3).join('; ')}${skipped.length > 3 ? ` (and ${skipped.length - 3} more)` : ''}` : '';
    this.log(`sweep: ${who}: its NIC is back but its namespace was not searched for in full${why}: left to an ADD of its NIC or sriovctl cleanup`);
  }

  /** The environment its IPAM DEL runs with: the daemon's own plugin dirs and PATH, nothing else (as a call's). */
  private envOf(): CniEnv {
    return parseEnv({ CNI_COMMAND: 'GC', CNI_PATH: this.d.cniPath.join(':'), PATH: this.d.path }, true);
  }
}
