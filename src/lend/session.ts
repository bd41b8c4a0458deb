// The lend session: what every engine call needs, made once per front door from an explicit configuration —
// the sysfs tree, the ledger, and one rtnetlink handle per namespace (opened on first use, then reused, as a
// netlink library keeps one handle per namespace). Nothing here reads the environment.
import { isAbsolute } from 'node:path';
import type { Config } from '../config';
import { InvalidArgument } from '../errors';
import type { EngineContext } from './context';
import { connect, netnsIdKey, ownNetnsId, sameNetns, type NamespaceRef, type Netns, type NetnsId, type Rtnl } from '../net';
import { openLedger, scanRecords, type Ledger, type ScanResult } from '../ledger';
import { assertTrustedStateDirIfPresent } from '../fs/secure-dir';
import { sysfsAt, type SriovVf, type Sysfs } from '../sriov';
import type { LendRecord } from '../ledger/types';
import * as giveBacks from './give-back';
import { commit, commitHeldWaiting, lend } from './lend';
import { prepare, prepareSteps, type LendPlan, type Refusal } from './prepare';
import { setLentVfCount, setVfCountHere, type VfCountHereRequest, type VfCountRequest } from './vf-count';
import { checkVfCountChange, type VfCountAsker, type VfCountClearance, type VfCountRefusal } from './vf-count-holders';
import { returnStray, type StrayNic } from './stray';
import { strayNics, type StrayScan } from './stray-scan';
import { nicExistsHere, recordsLentTo, recordsOfCluster, recordsOfNic, type ClusterRecords, type LentToTarget } from './select';
import type { Owner, OwnerMatch } from '../ledger/owner';
import type { GiveBackOptions, GiveBackResult, HeldLend, LendRequest, LendResult, LendSettings, NamespaceSpec, NicRef, PrepareRequest, RecoverOptions, RecoverReport } from './types';
import { giveBackOrder, type ClusterGiveBack, type ClusterGiveBackHooks, type ClusterStep, type RecordGiveBack } from './give-back-each';
import { failureOf } from './failure';
import { closePlace, openPlace, whereIs, type Whereabouts } from './where';
import { DEFAULT_SEARCH_BOUNDS, findCandidate, HOST_ROOTS, SearchBudget, type NamespaceCandidate } from './namespace-search';
import { findByHints } from './namespaces';
import { searchesOffThread, searchOffThread } from './namespace-search-thread';
import { abandonment, type Abandonment } from './abandoned';
import { runSteps } from '../util/wait';

export interface SessionOptions {
  /**
   * Keep every handle until close() (a one-shot process: a CNI call, a CLI command). Otherwise handles of other
   * namespaces are closed when the outermost engine call returns: a socket holds its namespace alive, and a
   * long-lived process must not keep a pod's or a node's namespace (and the physical NICs in it) from dying.
   */
  keepHandles?: boolean;
}

export class LendSession implements EngineContext {
  readonly sysfs: Sysfs;
  private ledgerCache: Ledger | null = null;
  private readonly handles = new Map<string, Rtnl>();
  private readonly ownKey: string;
  private depth = 0;
  /** What this call's searches for namespaces read of other containers' directories, and gave up on. */
  readonly search: SearchBudget;
  /** Namespaces already searched for in this call (null: not found), so a retry does not search again. */
  private readonly searched = new Map<string, NamespaceCandidate | null>();
  /** Those of them whose search gave up on a directory (see searchCutShort). */
  private readonly cutShort = new Set<string>();
  /** Inside readOnly() with a search thread: a search not done ahead stops the step (SearchNeeded) instead of running here. */
  private searchesElsewhere = false;
  /** Namespaces the running step holds open and acts on (see throughHandle): found through that handle, before any path. */
  private readonly held: Netns[] = [];

  constructor(
    readonly config: Config,
    private readonly opts: SessionOptions = {},
  ) {
    this.sysfs = sysfsAt(config.sysfsRoot);
    this.ownKey = keyOf(ownNetnsId());
    this.search = new SearchBudget(config.namespaceSearch ?? DEFAULT_SEARCH_BOUNDS);
  }

  /**
   * Where a recorded namespace can be reached: its record's hints, else a search of the machine (once per call,
   * within this call's budget) unless `hintsOnly`. A candidate only: reopen() checks what it opens.
   */
  findNamespace(ref: NamespaceRef, hintsOnly = false): NamespaceCandidate | null {
    const held = this.held.find((ns) => sameNetns(ns.id, ref.id));
    if (held) return { hostPath: `/proc/self/fd/${held.fd}`, inRoot: null };
    const byHints = findByHints(ref);
    if (byHints || hintsOnly) return byHints;
    const key = searchKey(ref);
    if (!this.searched.has(key)) {
      if (this.searchesElsewhere) throw new SearchNeeded(ref);
      const skippedBefore = this.search.skipped.length;
      this.searched.set(key, findCandidate(ref.id, this.search, HOST_ROOTS, ref.path, this.config.pause ?? null));
      if (this.search.skipped.length > skippedBefore) this.cutShort.add(key);
    }
    return this.searched.get(key)!;
  }

  searchCutShort(ref: NamespaceRef): boolean {
    const key = searchKey(ref);
    return this.cutShort.has(key) && this.searched.get(key) === null;
  }

  /**
   * A read-only engine step (phase one, a look into a recorded namespace) with no search of the machine on this
   * thread where searches have a worker (the daemon): each search it turns out to need stops it, runs on the worker
   * while this thread serves other calls, and the step runs again, finding it done. Changing nothing, a step may run
   * again; elsewhere it simply runs.
   */
  async readOnly<T>(step: () => T | Promise<T>): Promise<T> {
    if (!searchesOffThread()) return step();
    for (;;) {
      let needed: NamespaceRef;
      this.searchesElsewhere = true;
      try {
        return await step();
      } catch (err) {
        if (!(err instanceof SearchNeeded)) throw err;
        needed = err.ref;
      } finally {
        this.searchesElsewhere = false;
      }
      await this.searchAhead(needed);
      // no worker after all (its script missing, or it died): this one search runs here, as it would one-shot
      if (!this.searched.has(searchKey(needed))) this.findNamespace(needed);
    }
  }

  /**
   * Search for a recorded namespace ahead of the engine call that needs it, on a worker thread (the daemon's
   * thread serves other calls meanwhile); the call then finds it in this session. Without a worker (the
   * one-shot plugin, the CLI) nothing is done here: the search runs when the engine asks.
   */
  async searchAhead(ref: NamespaceRef): Promise<void> {
    const key = searchKey(ref);
    if (this.searched.has(key) || findByHints(ref)) return;
    const skippedBefore = this.search.skipped.length;
    const found = await searchOffThread(ref, this.search, this.config.pause ?? null);
    if (found === undefined) return;
    this.searched.set(key, found);
    if (this.search.skipped.length > skippedBefore) this.cutShort.add(key);
  }

  /**
   * `step` with `netns` reached through this open handle wherever a record names its identity: a namespace opened
   * and checked once (a stray's, by the scan) is the one acted on, whatever its path names by now — and one held
   * only by this handle is still found.
   */
  throughHandle<T>(netns: Netns, step: () => T): T {
    this.held.push(netns);
    try {
      return step();
    } finally {
      this.held.splice(this.held.indexOf(netns), 1);
    }
  }

  /** The same ledger over another sysfs tree (the simulated lab's), as a session of its own. */
  withSysfsRoot(root: string): LendSession {
    return new LendSession({ ...this.config, sysfsRoot: root }, this.opts);
  }

  /** The ledger under the state dir, created on first use (a VERSION call never touches the disk). */
  get ledger(): Ledger {
    return (this.ledgerCache ??= openLedger(this.config.stateDir));
  }

  /** The handle for `netns` (null: the caller's own namespace), opened once per namespace. */
  rtnl(netns: Netns | null): Rtnl {
    const key = netns ? keyOf(netns.id) : this.ownKey;
    let h = this.handles.get(key);
    if (!h) {
      h = connect(key === this.ownKey ? null : netns);
      this.handles.set(key, h);
    }
    return h;
  }

  /** How many handles are open (one per namespace used). */
  get openHandles(): number {
    return this.handles.size;
  }

  /** Run one engine call; handles of foreign namespaces are released after the outermost one (see keepHandles). */
  run<T>(fn: () => T): T {
    this.depth++;
    try {
      return fn();
    } finally {
      if (--this.depth === 0 && !this.opts.keepHandles) this.releaseForeign();
    }
  }

  /** The async form of run(), for calls that wait on sysfs (VF counts). */
  async runAsync<T>(fn: () => Promise<T>): Promise<T> {
    this.depth++;
    try {
      return await fn();
    } finally {
      if (--this.depth === 0 && !this.opts.keepHandles) this.releaseForeign();
    }
  }

  // ---- the engine, as this session runs it ----

  /** Phase one, read-only: the resolved NIC and what lending it means, or a typed refusal. */
  prepare(req: PrepareRequest): LendPlan | Refusal {
    return this.run(() => prepare(this, req));
  }

  /** prepare() run as this process runs steps (runSteps): in the daemon each request leaves the thread to other calls. */
  prepareWaiting(req: PrepareRequest): Promise<LendPlan | Refusal> {
    return this.runAsync(() => runSteps(prepareSteps(this, req)));
  }

  /** Phase two: record, then move and configure (everything rolled back on failure). */
  commit(plan: LendPlan, settings: LendSettings = {}): LendResult {
    return this.run(() => commit(this, plan, settings));
  }

  /**
   * commit() with its last record write left to the caller: seal(), sealWaiting() or rollBackWaiting() the HeldLend it returns. Its wait for
   * the NIC's lock does not hold up this thread (the daemon's other calls go on meanwhile).
   */
  async commitHeld(plan: LendPlan, settings: LendSettings = {}): Promise<HeldLend> {
    const held = await this.runAsync(() => commitHeldWaiting(this, plan, settings));
    // rolling back reopens namespaces: as an engine call of this session, so their handles are released after it
    return {
      ...held,
      sealWaiting: (meta) => this.runAsync(() => held.sealWaiting(meta)),
      rollBackWaiting: (cause) => this.runAsync(() => held.rollBackWaiting(cause)),
    };
  }

  /** Both phases; a refusal is thrown as its SysError. */
  lend(req: LendRequest): LendResult {
    return this.run(() => lend(this, req));
  }

  /** Give a NIC back from its record (its VF count, then the NIC). A second call is a no-op ('not-lent'). */
  async giveBack(key: string, opts: GiveBackOptions = {}): Promise<GiveBackResult> {
    const skippedBefore = this.search.skipped.length;
    const result = await this.runAsync(() => giveBacks.giveBack(this, key, opts));
    // what the search for its namespaces gave up on is said with the outcome: "gone" may mean "not found in time"
    return { ...result, warnings: [...result.warnings, ...this.search.skipped.slice(skippedBefore)] };
  }

  /**
   * Give back each of `records`, nested lends first, every one tried: one outcome each. Each is given back only
   * if its owner is still `opts.owner` (default: the owner its record had when it was selected).
   */
  async giveBackEach(records: LendRecord[], opts: GiveBackOptions = {}): Promise<RecordGiveBack[]> {
    const outcomes: RecordGiveBack[] = [];
    for (const record of giveBackOrder(records)) {
      try {
        outcomes.push({ record, result: await this.giveBack(record.key, { ...opts, owner: opts.owner ?? record.owner }) });
      } catch (err) {
        outcomes.push({ record, failure: failureOf(err) });
      }
    }
    return outcomes;
  }

  /** Give back every record of `owners` (giveBackEach). */
  giveBackOwnedBy(owners: OwnerMatch, opts: GiveBackOptions = {}): Promise<RecordGiveBack[]> {
    return this.giveBackEach(this.findRecords({ owner: owners }), opts);
  }

  /** Give back the records of `owners` lent to `target` or attached under `attachedAs` (recordsLentTo, giveBackEach). */
  async giveBackLentTo(
    owners: OwnerMatch,
    target: NamespaceSpec | null,
    attachedAs: Owner,
    opts: GiveBackOptions = {},
  ): Promise<{ outcomes: RecordGiveBack[]; unresolved: string | null }> {
    const { records, unresolved } = this.recordsLentTo(owners, target, attachedAs);
    return { outcomes: await this.giveBackEach(records, opts), unresolved };
  }

  /**
   * Give back a cluster's NICs (recordsOfCluster) in the order that keeps each one's home there: what is attached
   * inside the cluster first (its home is a node, which must still be there), then the VF netdevs lent to the nodes
   * (before their PFs, whose names they may have held at home), then the nodes' PFs side by side with their VF
   * counts kept; once every NIC is home, the VF counts (a write that may wait on a driver or a VFIO holder). Every
   * record tried, one outcome each; a record's owner must still be the one it was selected with.
   */
  async giveBackCluster(name: string, opts: GiveBackOptions = {}, hooks: ClusterGiveBackHooks = {}): Promise<ClusterGiveBack> {
    const records = this.recordsOfCluster(name);
    hooks.selected?.(records);
    const one = async (record: LendRecord, step: ClusterStep): Promise<RecordGiveBack> => {
      hooks.starting?.(record, step);
      let outcome: RecordGiveBack;
      try {
        const vfCountLast = step === 'nic-keeping-vf-count' ? true : undefined;
        outcome = { record, result: await this.giveBack(record.key, { ...opts, owner: record.owner, vfCountLast }) };
      } catch (err) {
        outcome = { record, failure: failureOf(err) };
      }
      hooks.done?.(outcome, step);
      return outcome;
    };
    const nics: RecordGiveBack[] = [];
    for (const r of records.borrowed) nics.push(await one(r, 'nic'));
    for (const r of records.vfNetdevs) nics.push(await one(r, 'nic'));
    const pfs = records.own.filter((r) => !records.vfNetdevs.includes(r));
    const pfOutcomes = await Promise.all(pfs.map((r) => one(r, 'nic-keeping-vf-count')));
    nics.push(...pfOutcomes);
    const vfCounts = await Promise.all(
      pfOutcomes.map((o) => {
        // a PF that could not be brought home keeps its whole record for a later give-back
        const r = o.failure ? undefined : this.findRecords({ key: o.record.key })[0];
        return r?.vfCount ? one(r, 'vf-count') : Promise.resolve(null);
      }),
    );
    return { records, nics, vfCounts: vfCounts.filter((o): o is RecordGiveBack => o !== null) };
  }

  /** Finish every incomplete lend (roll back) and give-back found in the ledger. Lent NICs stay lent. */
  recover(opts: RecoverOptions = {}): Promise<RecoverReport> {
    return this.runAsync(() => giveBacks.recover(this, opts));
  }

  /** Give a lent PF `count` VFs, its count at home recorded first: every give-back puts it back. */
  setLentVfCount(req: VfCountRequest): Promise<SriovVf[]> {
    return this.runAsync(() => setLentVfCount(this, req));
  }

  /** A PF's VF count set from the caller's namespace, or the refusal naming every lend in the way. */
  setVfCountHere(req: VfCountHereRequest): Promise<SriovVf[] | VfCountRefusal> {
    return this.runAsync(() => setVfCountHere(this, req));
  }

  /** Read-only: whether `asker` may change PF `pf`'s VF count now (what setLentVfCount checks first). */
  checkVfCountChange(pf: string, asker: VfCountAsker): VfCountRefusal | VfCountClearance {
    return this.run(() => checkVfCountChange(this, pf, asker));
  }

  findRecords(filter: giveBacks.RecordFilter = {}): LendRecord[] {
    return giveBacks.findRecords(this, filter);
  }

  /**
   * Every record and every unreadable one, read without creating anything (a machine that never lent a NIC has no
   * state dir, and a status must not make one).
   */
  status(): ScanResult {
    assertTrustedStateDirIfPresent(this.config.stateDir);
    return scanRecords({ dir: this.config.stateDir });
  }

  /** The records of a NIC as a person names it (outermost only: the others are given back with them). */
  recordsOfNic(selector: NicRef): LendRecord[] {
    return this.run(() => recordsOfNic(this, selector));
  }

  /** Whether the NIC a person named exists here (a link in our namespace, a PCI device). */
  nicExistsHere(selector: NicRef): boolean {
    return this.run(() => nicExistsHere(this, selector));
  }

  /** The records of `owners` lent to `target` (null: it did not resolve), or attached under `attachedAs`. */
  recordsLentTo(owners: OwnerMatch, target: NamespaceSpec | null, attachedAs: Owner): LentToTarget {
    return this.run(() => recordsLentTo(this, owners, target, attachedAs));
  }

  /** A cluster's records: its nodes' NICs, their VF netdevs, and what is attached inside it. */
  recordsOfCluster(name: string): ClusterRecords {
    return this.run(() => recordsOfCluster(this, name));
  }

  /** SR-IOV NICs nobody recorded, outside the homes of `homesOf` and not in `recorded` (cleanup returns them). */
  strayNics(homesOf: LendRecord[], recorded: LendRecord[]): StrayScan {
    return this.run(() => strayNics(this, homesOf, recorded));
  }

  returnStray(stray: StrayNic): GiveBackResult {
    return this.run(() => returnStray(this, stray));
  }

  /**
   * Read-only: whether its attachment's namespace is gone and its NIC back (abandoned.ts), a search for that namespace
   * that was cut short said as such ('unknown'), never taken for a namespace gone.
   */
  abandonment(record: LendRecord): Abandonment {
    return this.run(() => abandonment(this, record));
  }

  whereIs(record: LendRecord): Whereabouts {
    return this.run(() => whereIs(this, record));
  }

  /** `fn` with the handle of a recorded namespace, reopened by identity (never by path alone); null when gone. */
  inRecordedNamespace<T>(ref: NamespaceRef, fn: (rtnl: Rtnl) => T): T | null {
    return this.run(() => {
      const place = openPlace(this, ref, 'pf');
      if (!place) return null;
      try {
        return fn(place.rtnl);
      } finally {
        closePlace(place);
      }
    });
  }

  /** Close the handle of one namespace (a namespace we are about to let die). */
  release(id: NetnsId): void {
    const key = keyOf(id);
    if (key === this.ownKey) return;
    this.handles.get(key)?.close();
    this.handles.delete(key);
  }

  close(): void {
    for (const h of this.handles.values()) h.close();
    this.handles.clear();
  }

  private releaseForeign(): void {
    for (const [key, h] of this.handles) {
      if (key === this.ownKey) continue;
      h.close();
      this.handles.delete(key);
    }
  }
}

const keyOf = netnsIdKey;

/** Thrown inside LendSession.readOnly(): the step needs a search of the machine it must not run on this thread. */
class SearchNeeded extends Error {
  constructor(readonly ref: NamespaceRef) {
    super('a namespace search is needed');
  }
}

const searchKey = (ref: NamespaceRef) => `${keyOf(ref.id)}:${ref.cookie ?? ''}:${ref.path ?? ''}`;

export function openSession(config: Config, opts: SessionOptions = {}): LendSession {
  const problem = configProblem(config);
  if (problem) throw new InvalidArgument(`openSession: ${problem}`);
  return new LendSession(config, opts);
}

/** The paths every session works on, checked where a JavaScript caller hands them in (the front doors' loadConfig
 *  makes them whole): a missing one would otherwise fail deep inside a step, as Node's own path error. */
const CONFIG_PATHS = ['stateDir', 'sysfsRoot', 'resolvConf'] as const;

function configProblem(config: unknown): string | null {
  if (typeof config !== 'object' || config === null) return `a configuration is needed (got ${describeValue(config)})`;
  const c = config as Record<string, unknown>;
  for (const key of CONFIG_PATHS) {
    const v = c[key];
    if (typeof v !== 'string' || !isAbsolute(v)) return `config.${key} must be an absolute path (got ${describeValue(v)})`;
  }
  if (typeof c.env !== 'object' || c.env === null) return `config.env must be an object of environment variables (got ${describeValue(c.env)})`;
  return null;
}

function describeValue(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v;
}
