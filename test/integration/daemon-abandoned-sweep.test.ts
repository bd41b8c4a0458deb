// The daemon gives back, on its own, a CNI attachment whose DEL never came (Multus thick's shim answering DEL while
// its daemon is down, a crashed runtime): once the pod's namespace is gone and the NIC is back, a sweep brings the
// NIC home as it was — name, MAC, MTU, address — and drops its record, with no ADD, DEL or cleanup. A record whose
// namespace still exists, and an `attach` record whose target died (a person's: detach, cleanup), are left alone. A real
// `sriovctl daemon` with a one-second sweep, the real shim, a veth stand-in; the kernel's way with a physical NIC
// whose namespace dies (back to the initial namespace under its pod name) is done by the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type SearchBounds } from '../../src/config';
import { AbandonedSweep, type SweepReport } from '../../src/daemon/abandoned-sweep';
import { findCandidate, SearchBudget } from '../../src/lend/namespace-search';
import { ledgerRecords, netnsPath, runCni, runCniAsync, type CniCall } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import { sriovctl } from '../helpers/cli-process';
import { ip, ipJson } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';

let w: CniPodWorld;
let nic: NicState;
let daemon: DaemonProcess | null = null;

useCniPodWorld((world) => ({ nic } = w = world), 'q0', { tempDir: 'sriovctl-sweep-' });

/** Processes of other mount namespaces a test started (see otherMountNamespace). */
const others: ChildProcess[] = [];

afterEach(async () => {
  await daemon?.stop(5000);
  daemon = null;
  while (others.length) others.pop()!.kill('SIGKILL');
});

/** Generous: a sweep a second, on a machine shared with other suites and a cluster build. */
const SWEPT_WITHIN_MS = 60_000;
const sock = () => join(w.dir, 'run', 'cni.sock');
/** The pod's interface: named with the test's prefix, since the kernel brings it home under that name. */
const podIf = () => w.s.name('p1');

/** An address of the NIC at home (no route: noprefixroute), which a move makes the kernel forget. */
const HOME_ADDRESS = 'fd5e:5eed::7';

function homeAddresses(): string[] {
  const [link] = ipJson<any[]>('addr', 'show', 'dev', nic.name);
  return (link?.addr_info ?? []).filter((a: any) => a.scope === 'global').map((a: any) => `${a.local}/${a.prefixlen}`);
}

/** Static IPAM by default; the main test's host-local keeps an allocation file the sweep's IPAM DEL must remove. */
function call(command: string, ipam: object = { type: 'static', addresses: [{ address: '10.96.0.5/24' }] }): CniCall {
  return {
    command,
    containerId: `ctr-${w.s.prefix}`,
    netns: netnsPath(w.pod),
    ifname: podIf(),
    config: deviceConf(w.s, nic, ipam),
    transport: 'shim',
    env: { SRIOVCTL_SOCKET: sock() },
  };
}

/** A daemon whose own state dir and sysfs root are the test's, sweeping every second. */
async function sweepingDaemon(): Promise<DaemonProcess> {
  return (daemon = await startDaemon(sock(), { SRIOVCTL_STATE_DIR: w.roots.stateDir, SRIOVCTL_SYSFS_ROOT: w.roots.sim.root, SRIOVCTL_DAEMON_SWEEP_S: '1' }));
}

/** The pod dies without a DEL: the kernel puts the NIC back in the initial namespace under its pod name. */
function podDiesWithoutDel(ifname: string, pod = w.pod): void {
  ip('-n', pod, 'link', 'set', ifname, 'netns', '1');
  ip('netns', 'del', pod);
}

async function pollUntil(what: string, done: () => boolean, log: () => string): Promise<void> {
  const deadline = Date.now() + SWEPT_WITHIN_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${SWEPT_WITHIN_MS / 1000} s; daemon log:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once `n` sweeps have ended after this call (each sweep's start time differs from the one before). */
async function sweepsEnded(running: DaemonProcess, n: number): Promise<void> {
  let seen = (await running.stats()).sweep.last?.at ?? '';
  for (let left = n; left > 0; ) {
    await new Promise((r) => setTimeout(r, 100));
    const at = (await running.stats()).sweep.last?.at ?? '';
    if (at !== seen) {
      seen = at;
      left--;
    }
  }
}

describe('the daemon sweeps abandoned CNI attachments', () => {
  it('brings home, on its own, the NIC of a pod whose namespace died without a DEL', async () => {
    ip('addr', 'add', `${HOME_ADDRESS}/64`, 'dev', nic.name, 'nodad', 'noprefixroute');
    const before = homeAddresses();
    expect(before).toEqual([`${HOME_ADDRESS}/64`]);
    const running = await sweepingDaemon();
    expect((await running.stats()).sweep.everySeconds).toBe(1);
    const dataDir = join(w.dir, 'ipam');
    const add = await runCniAsync(call('ADD', { type: 'host-local', dataDir, ranges: [[{ subnet: '10.96.0.0/24', rangeStart: '10.96.0.5' }]] }), w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(nicState(podIf(), w.pod)?.mac).toBe(nic.mac);
    const allocation = join(dataDir, `net-${w.s.prefix}`, '10.96.0.5');
    expect(readFileSync(allocation, 'utf8')).toContain(`ctr-${w.s.prefix}`);
    expect(ledgerRecords(w.roots.stateDir)).toHaveLength(1);

    podDiesWithoutDel(podIf());
    // the record goes before the sweep logs its outcome, which comes through a pipe: both are waited for
    const logged = /sweep: .* of cni:ctr-\S+: its namespace is gone and its NIC back: gave it back: returned/;
    await pollUntil('the NIC home and its record gone', () => ledgerRecords(w.roots.stateDir).length === 0 && logged.test(running.log()), running.log);
    expect(nicState(nic.name)).toEqual(nic);
    expect(nicState(podIf())).toBeNull();
    expect(homeAddresses()).toEqual(before);
    // its IPAM allocation released as the attachment's own DEL would have
    expect(existsSync(allocation)).toBe(false);
    expect((await running.stats()).sweep.gaveBack).toBe(1);
    const status = await sriovctl({ stateDir: w.roots.stateDir, sysfsRoot: w.roots.sim.root, extra: { SRIOVCTL_SOCKET: sock() } }, ['status']);
    expect(status.stdout).toContain('1 abandoned NIC given back');
    // SIGTERM stops the sweep with the rest: the daemon exits 0 at once, nothing left running
    expect(await running.stop(5000)).toEqual({ code: 0, signal: null });
  });

  it('leaves a record whose namespace still exists, sweep after sweep', async () => {
    const running = await sweepingDaemon();
    const add = await runCniAsync(call('ADD'), w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    const [record] = ledgerRecords(w.roots.stateDir);
    await sweepsEnded(running, 3);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([record]);
    expect(nicState(podIf(), w.pod)?.mac).toBe(nic.mac);
    expect((await running.stats()).sweep.last).toMatchObject({ examined: 1, gaveBack: 0, failed: 0 });
    const del = await runCniAsync(call('DEL'), w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it("leaves an attach record whose target died: that is a person's give-back", async () => {
    const cli = { stateDir: w.roots.stateDir, sysfsRoot: w.roots.sim.root };
    const attach = await sriovctl(cli, ['attach', nic.name, w.pod]);
    expect(attach.code, attach.stdout + attach.stderr).toBe(0);
    const running = await sweepingDaemon();
    podDiesWithoutDel(nic.name);
    const [record] = ledgerRecords(w.roots.stateDir);
    expect(record.owner).toBe(`attach:${w.pod}`);
    await sweepsEnded(running, 3);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([record]);
    expect((await running.stats()).sweep.last).toMatchObject({ examined: 0, gaveBack: 0 });
    // a person's give-back (detach, or cleanup) is what takes it
    const detach = await sriovctl(cli, ['detach', nic.name]);
    expect(detach.code, detach.stdout + detach.stderr).toBe(0);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('what the sweep never takes', () => {
  const BDF = '0000:5e:00.0';

  // A device on a userspace driver (vfio-pci: DPDK) is lent without being moved: it is where it always was, live pod
  // or not, and only a search of the machine for the pod's namespace could tell the two apart — a bounded search, on a
  // machine where other containers' directories are anyone's. Its pod's namespace is gone here, and the sweep leaves
  // it all the same: an ADD of the device, GC or cleanup takes it.
  it('a record whose NIC was never moved (a userspace driver), even with its namespace gone', async () => {
    w.roots.sim.addPciDevice({ bdf: BDF, driver: 'vfio-pci' });
    const dpdk = { cniVersion: '1.1.0', name: `net-${w.s.prefix}`, type: 'sriovctl-cni', pciBusID: BDF, ipam: { type: 'static', addresses: [{ address: '10.96.0.6/24' }] } };
    const running = await sweepingDaemon();
    const add = await runCniAsync({ ...call('ADD'), config: dpdk }, w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    const [record] = ledgerRecords(w.roots.stateDir);
    expect(record.moved).toBe(false);
    ip('netns', 'del', w.pod);
    await sweepsEnded(running, 3);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([record]);
    expect((await running.stats()).sweep).toMatchObject({ gaveBack: 0, last: { examined: 0, gaveBack: 0 } });
    expect(running.log()).not.toContain('gave it back');
    const del = await runCniAsync({ ...call('DEL'), netns: '', config: dpdk }, w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
  });

  // The search for a namespace is bounded; one that gave up on a directory (here: a budget of no entries at all, and
  // a process of another mount namespace whose /run/netns it would have to read) has not seen every namespace.
  it('a record whose namespace was not searched for in full: unknown, not gone', async () => {
    await otherMountNamespace(0);
    const add = runCni({ ...call('ADD'), transport: 'oneshot' }, w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    const [record] = ledgerRecords(w.roots.stateDir);
    podDiesWithoutDel(podIf());
    const { report, log } = await sweepInProcess({ ...WIDE, entriesPerCall: 0 });
    expect(report).toMatchObject({ examined: 1, gaveBack: 0, failed: 0 });
    expect(ledgerRecords(w.roots.stateDir)).toEqual([record]);
    expect(log.join('\n')).toMatch(/its NIC is back but its namespace was not searched for in full: namespace search skipped .*bound of entries per call \(0\) reached/);
    const del = runCni({ ...call('DEL'), netns: '', transport: 'oneshot' }, w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('each record of a sweep is searched for with a budget of its own', () => {
  // Two pods died without a DEL. Each search for a namespace that is gone reads every foreign directory to its end; a
  // budget that holds one such search but not two, shared by the sweep, would leave the second record's search cut
  // short (unknown: not given back). The machine's own foreign directories are counted first, plus 1 000 entries of a
  // mount namespace of the test's, so that what one search reads is known.
  it('two abandoned records, one budget of one search each: both given back in one sweep', async () => {
    await otherMountNamespace(1000);
    const nic2 = standInNic(w.s, 'q1');
    const pod2 = w.s.netns('pod2');
    const if2 = w.s.name('p2');
    const call2: CniCall = { ...call('ADD'), containerId: `ctr2-${w.s.prefix}`, netns: netnsPath(pod2), ifname: if2, config: deviceConf(w.s, nic2, { type: 'static', addresses: [{ address: '10.96.0.7/24' }] }) };
    for (const c of [{ ...call('ADD'), transport: 'oneshot' as const }, { ...call2, transport: 'oneshot' as const }]) {
      const add = runCni(c, w.roots);
      expect(add.status, add.stdout + add.stderr).toBe(0);
    }
    expect(ledgerRecords(w.roots.stateDir)).toHaveLength(2);
    podDiesWithoutDel(podIf());
    podDiesWithoutDel(if2, pod2);
    const oneSearch = entriesOfOneSearch();
    expect(oneSearch).toBeGreaterThanOrEqual(1000);
    const { report, log } = await sweepInProcess({ ...WIDE, entriesPerCall: oneSearch + 500 });
    expect(report, log.join('\n')).toMatchObject({ examined: 2, gaveBack: 2, failed: 0 });
    expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
    expect(nicState(nic.name)).toEqual(nic);
    expect(nicState(nic2.name)).toEqual(nic2);
  });
});

describe('a record the sweep did not give back is not counted as given back', () => {
  // The sweep reads the ledger, then looks at each record's namespace; a DEL that comes meanwhile gives the NIC back
  // itself. The sweep's give-back then finds no record ('not-lent'): nothing was given back by the sweep.
  it("a DEL that gave the NIC back while the sweep searched for its namespace: 'not-lent', not 'given back'", async () => {
    const add = runCni({ ...call('ADD'), transport: 'oneshot' }, w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    podDiesWithoutDel(podIf());
    const pauseDir = join(w.dir, 'pause');
    mkdirSync(pauseDir);
    const running = (daemon = await startDaemon(sock(), {
      SRIOVCTL_STATE_DIR: w.roots.stateDir,
      SRIOVCTL_SYSFS_ROOT: w.roots.sim.root,
      SRIOVCTL_DAEMON_SWEEP_S: '1',
      SRIOVCTL_PAUSE: 'namespace-search',
      SRIOVCTL_PAUSE_DIR: pauseDir,
    }));
    await pollUntil('the sweep searching for the pod namespace', () => existsSync(join(pauseDir, 'reached')), running.log);
    const del = runCni({ ...call('DEL'), netns: '', transport: 'oneshot' }, w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
    writeFileSync(join(pauseDir, 'release'), '');
    await pollUntil('the sweep done with the record', () => /sweep: .* of cni:ctr-\S+: no longer lent to it/.test(running.log()), running.log);
    await sweepsEnded(running, 1);
    const stats = await running.stats();
    expect(stats.sweep.gaveBack, running.log()).toBe(0);
    expect(running.log()).not.toContain('gave it back');
    const status = await sriovctl({ stateDir: w.roots.stateDir, sysfsRoot: w.roots.sim.root, extra: { SRIOVCTL_SOCKET: sock() } }, ['status']);
    expect(status.stdout).not.toContain('abandoned NIC');
  });
});

/** Bounds no search reaches but for the one a test sets: no time bound, no bound of one directory. */
const WIDE: SearchBounds = { entriesPerDir: 1e9, entriesPerCall: 1e9, msPerDir: 1e9, msPerCall: 1e9, oversizedRereadMs: 10_000 };

/**
 * A process in a mount namespace of its own, its /run/netns a tmpfs of `entries` plain files (0: its copy of ours,
 * left as it is): a foreign directory every search of the machine reads.
 */
async function otherMountNamespace(entries: number): Promise<void> {
  const ready = join(w.dir, `other-${others.length}`);
  const fill = entries > 0 ? `mount -t tmpfs sriovctl-test-pad /run/netns && i=0 && while [ $i -lt ${entries} ]; do : > /run/netns/pad$i; i=$((i+1)); done && ` : '';
  const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${fill}: > ${ready} && exec sleep 600`], { stdio: 'ignore' });
  others.push(child);
  await pollUntil('the other mount namespace ready', () => existsSync(ready), () => '');
}

/** How many entries of foreign directories one search for a namespace that does not exist reads right now. */
function entriesOfOneSearch(): number {
  const budget = new SearchBudget(WIDE);
  expect(findCandidate({ dev: 0, ino: 1 }, budget)).toBeNull();
  expect(budget.skipped).toEqual([]);
  return budget.entriesRead;
}

/** One sweep in this process, its namespace searches within `bounds` (the daemon's are the defaults). */
async function sweepInProcess(bounds: SearchBounds): Promise<{ report: SweepReport; log: string[] }> {
  const log: string[] = [];
  const config = { ...loadConfig({ SRIOVCTL_STATE_DIR: w.roots.stateDir, SRIOVCTL_SYSFS_ROOT: w.roots.sim.root }), namespaceSearch: bounds };
  const d = { config, logDirs: [], cniPath: ['/usr/lib/cni'], path: process.env.PATH ?? '/usr/bin:/bin', callerRoot: null, hostMountsOf: null };
  const sweeper = new AbandonedSweep(d, 3_600_000, (line) => log.push(line));
  sweeper.start();
  await pollUntil('the sweep done', () => sweeper.last !== null, () => log.join('\n'));
  await sweeper.stop();
  return { report: sweeper.last!, log };
}
