// A hostile neighbour — an unprivileged process in user and mount namespaces of its own, its /run a tmpfs it
// fills — cannot stall the namespace search, redirect it outside its own root, or slip an excluded namespace
// into cleanup's sweep. Real namespaces, a real unprivileged planter (test/helpers/hostile-neighbour.ts), the
// real plugin and daemon. Bounds are asserted by counts, never by time.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanForStrays } from '../../src/lend/stray-scan';
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';
import { DEFAULT_SEARCH_BOUNDS } from '../../src/lend/namespace-search';
import { statNetnsId } from '../../src/net';
import { ledgerRecords, netnsPath, runCniAsync, type CniCall } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import { startNeighbour, type Neighbour } from '../helpers/hostile-neighbour';
import { ip, ipIn } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { spawnTs, waitForExit } from '../helpers/ts-child';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import type { CleanupEntry } from '../../src/cli/cleanup';

const HUGE = 300_000;
const STRAY_SCAN_CHILD = join(__dirname, 'stray-scan-child.ts');

async function until(ready: () => boolean, what: string): Promise<void> {
  // a hang guard, not a measurement: generous for a busy machine
  for (let i = 0; i < 1200 && !ready(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!ready()) throw new Error(`gave up waiting: ${what}`);
}
const neighbours: Neighbour[] = [];

async function neighbour(plan: Parameters<typeof startNeighbour>[0]): Promise<Neighbour> {
  const n = await startNeighbour(plan);
  neighbours.push(n);
  return n;
}

afterEach(async () => {
  while (neighbours.length) await neighbours.pop()!.kill();
});

/**
 * How many entries of the neighbour's directory a call read before it gave up, as its output says (null: it did
 * not say it gave up). A daemon that already found the directory over its bound skips it unread while it stays
 * unchanged (0): which call of the daemon's meets it first is a race (another pod's ADD searches too).
 */
function entriesReadOf(output: string, n: Neighbour): number | null {
  const read = new RegExp(`namespace search skipped ${n.netnsDir} after (\\d+) entries: bound of `).exec(output);
  if (read) return Number(read[1]);
  return output.includes(`namespace search skipped ${n.netnsDir}: over the bounds of one directory when last read, `) ? 0 : null;
}

/** The call said it gave up on the neighbour's directory, having read no more than the bound of one directory. */
function expectBounded(output: string, n: Neighbour): void {
  const read = entriesReadOf(output, n);
  expect(read, output).not.toBeNull();
  expect(read!).toBeLessThanOrEqual(DEFAULT_SEARCH_BOUNDS.entriesPerDir);
}

describe('a neighbour with 300 000 entries in its /run/netns', () => {
  let w: CniPodWorld;
  let daemon: DaemonProcess | null = null;
  useCniPodWorld((world) => (w = world), 'n0', { tempDir: 'sriovctl-neighbour-cni-' });

  afterEach(async () => {
    await daemon?.stop(5000);
    daemon = null;
  });

  const staticIpam = { type: 'static', addresses: [{ address: '10.95.0.5/24' }] };
  const call = (command: string, id: string, podPath: string, device: NicState, transport: 'oneshot' | 'shim'): CniCall => ({
    command,
    containerId: id,
    netns: podPath,
    ifname: 'net1',
    config: deviceConf(w.s, device, staticIpam),
    transport,
    env: transport === 'shim' ? { SRIOVCTL_SOCKET: join(w.dir, 'run', 'cni.sock') } : {},
  });

  /** A pod namespace that goes away before its DEL (the runtime deleted it first), with our NIC lent into it. */
  async function lentIntoDoomedPod(transport: 'oneshot' | 'shim'): Promise<string> {
    const doomed = `${w.s.prefix}doomed`;
    ip('netns', 'add', doomed);
    w.s.onCleanup(() => execFileSync('ip', ['netns', 'del', doomed], { stdio: 'ignore' }));
    const add = await runCniAsync(call('ADD', 'c1', netnsPath(doomed), w.nic, transport), w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    // the namespace dies with its last reference: the stand-in (a veth) dies with it
    ip('netns', 'del', doomed);
    return doomed;
  }

  it('a one-shot DEL whose pod namespace is gone reads at most the bound of that directory, and says it skipped it', async () => {
    const n = await neighbour({ files: HUGE });
    const doomed = await lentIntoDoomedPod('oneshot');
    const del = await runCniAsync(call('DEL', 'c1', netnsPath(doomed), w.nic, 'oneshot'), w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expectBounded(del.stderr, n);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
  });

  it("through the daemon: the DEL is bounded and says so, and another pod's ADD and DEL meanwhile are served", async () => {
    const n = await neighbour({ files: HUGE });
    mkdirSync(join(w.dir, 'run'), { recursive: true, mode: 0o700 });
    const running = (daemon = await startDaemon(join(w.dir, 'run', 'cni.sock')));
    const doomed = await lentIntoDoomedPod('shim');
    const pod2 = w.s.netns('pod2');
    const nic2 = standInNic(w.s, 'n1');
    const slow = runCniAsync(call('DEL', 'c1', netnsPath(doomed), w.nic, 'shim'), w.roots);
    const add2 = await runCniAsync(call('ADD', 'c2', netnsPath(pod2), nic2, 'shim'), w.roots);
    expect(add2.status, add2.stdout + add2.stderr).toBe(0);
    expect(nicState('net1', pod2)).toMatchObject({ mac: nic2.mac });
    const del2 = await runCniAsync(call('DEL', 'c2', netnsPath(pod2), nic2, 'shim'), w.roots);
    expect(del2.status, del2.stdout + del2.stderr).toBe(0);
    const del = await slow;
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expectBounded(del.stderr, n);
    expect(nicState(nic2.name)).toEqual(nic2);
    expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
    // every call was the daemon's, none fell back to the one-shot plugin
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 2, DEL: 2 });
  });
});

describe("links in a neighbour's /run/netns", () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));
  let pinDir: string;

  beforeEach(() => {
    pinDir = '';
  });
  afterEach(() => {
    if (!pinDir) return;
    try {
      execFileSync('umount', ['-l', join(pinDir, 'pinned')], { stdio: 'ignore' });
    } catch {
      // never mounted
    }
    rmSync(pinDir, { recursive: true, force: true });
  });

  /**
   * A namespace holding an SR-IOV PF, pinned only by a bind mount at a host path (`path`), mounted after the
   * neighbour started: the neighbour's mounts are a private copy, so inside it that path is an empty file.
   */
  function pfPinnedAt(path: string, bdf: string): string {
    const named = w.netns('pin');
    const pf = w.pf('p', bdf);
    ip('link', 'set', pf.name, 'netns', named);
    execFileSync('mount', ['--bind', `/var/run/netns/${named}`, path]);
    // now reachable only there: the named entry gone, nothing running in it
    execFileSync('umount', [`/var/run/netns/${named}`]);
    rmSync(`/var/run/netns/${named}`);
    return pf.name;
  }

  it('a link that dangles inside the neighbour is never followed through our own tree', async () => {
    pinDir = mkdtempSync(join(tmpdir(), 'sriovctl-pin-'));
    const pinned = join(pinDir, 'pinned');
    writeFileSync(pinned, '');
    const n = await neighbour({ links: { dangling: pinned } });
    pfPinnedAt(pinned, '0000:af:00.0');
    const dry = await w.run('cleanup', '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const entries = JSON.parse(dry.stdout) as { from: string | null; pciAddress: string | null }[];
    expect(entries.map((e) => e.from)).not.toContain(`${n.netnsDir}/dangling`);
    expect(entries.map((e) => e.pciAddress)).not.toContain('0000:af:00.0');
  });

  it('a link flipped to an excluded namespace once the scan has settled on what it named is never followed there', async () => {
    const excluded = w.netns('excl');
    const pf = w.pf('x', '0000:af:00.2');
    ip('link', 'set', pf.name, 'netns', excluded);
    // the link names a namespace of the neighbour's own, reached only through it: a candidate, not excluded
    const name = `flip-${w.s.prefix}`;
    const n = await neighbour({ bindSecondNetns: true, links: { [name]: '../ns2' }, flipOnSignal: { name, to: `/var/run/netns/${excluded}` } });
    const pause = mkdtempSync(join(tmpdir(), 'sriovctl-pause-'));
    try {
      const env = { ...process.env, SRIOVCTL_PAUSE: 'stray-scan:identified', SRIOVCTL_PAUSE_DIR: pause, SRIOVCTL_PAUSE_SUBJECT: `/netns/${name}` };
      const scan = spawnTs(STRAY_SCAN_CHILD, [w.env.stateDir, w.env.sysfsRoot, `/var/run/netns/${excluded}`], env);
      const done = waitForExit(scan);
      await until(() => existsSync(join(pause, 'reached')), 'the scan held at the link');
      // the scan has settled which namespace the link names; now it names the excluded one (as the host sees it)
      process.kill(n.pid, 'SIGHUP');
      await until(() => existsSync(`${n.root}/run/flipped`), 'the neighbour flipped its link');
      writeFileSync(join(pause, 'release'), '');
      const out = await done;
      expect(out.code, out.stderr).toBe(0);
      const strays = JSON.parse(out.stdout.trim().split('\n').pop()!) as { pciAddress: string; from: string }[];
      expect(strays.map((x) => x.pciAddress)).not.toContain('0000:af:00.2');
    } finally {
      rmSync(pause, { recursive: true, force: true });
    }
    expect(w.state(pf.name, excluded)).not.toBeNull();
  });

  // The same window, seen by the give-back: the path the scan found a NIC through names another namespace by the
  // time cleanup gives that NIC back. The other namespace holds a plain link of the same name (no SR-IOV NIC: never a
  // stray of its own), so a give-back that reopened the path would move that link instead.
  it('a path re-pointed once the scan has settled on it: cleanup gives back the NIC of the namespace it opened, nothing of the one the path names by then', async () => {
    const checked = w.netns('chk');
    const other = w.netns('oth');
    const pf = w.pf('s', '0000:af:00.3');
    ip('link', 'set', pf.name, 'netns', checked);
    ipIn(checked, 'link', 'set', pf.name, 'name', 'eth9');
    const bystander = w.plainNic('by', other);
    ipIn(other, 'link', 'set', bystander.name, 'name', 'eth9');
    const pause = mkdtempSync(join(tmpdir(), 'sriovctl-pause-'));
    let repointed = false;
    try {
      const env = { SRIOVCTL_PAUSE: 'stray-scan:identified', SRIOVCTL_PAUSE_DIR: pause, SRIOVCTL_PAUSE_SUBJECT: `/netns/${checked}` };
      const cleanup = w.runWith(env, 'cleanup', '--json');
      await until(() => existsSync(join(pause, 'reached')), 'the scan held at the namespace');
      // the path now names the other namespace; the one the scan opened lives on (its fd, the mount beneath)
      execFileSync('mount', ['--bind', `/var/run/netns/${other}`, `/var/run/netns/${checked}`]);
      repointed = true;
      writeFileSync(join(pause, 'release'), '');
      const r = await cleanup;
      expect(r.code, r.stderr).toBe(0);
      const entries = JSON.parse(r.stdout) as CleanupEntry[];
      expect(entries.map((e) => [e.nic, e.pciAddress, e.outcome, e.name, e.from])).toEqual([['eth9', '0000:af:00.3', 'returned', pf.name, `/var/run/netns/${checked}`]]);
    } finally {
      if (repointed) execFileSync('umount', [`/var/run/netns/${checked}`]);
      rmSync(pause, { recursive: true, force: true });
    }
    expect(w.state(pf.name)).toMatchObject({ mac: pf.mac, mtu: pf.mtu });
    expect(w.state('eth9', other)).toMatchObject({ mac: bystander.mac });
    expect(w.state('eth9', checked)).toBeNull();
    expect(w.records()).toEqual([]);
  });

  it('a link flipped between a file of its own and an excluded namespace never gets the excluded one swept', async () => {
    const excluded = w.netns('excl');
    const pf = w.pf('x', '0000:af:00.1');
    ip('link', 'set', pf.name, 'netns', excluded);
    const excludedId = statNetnsId(`/var/run/netns/${excluded}`)!;
    // a plain file of its own: what a stat before the open would have let through (its identity is no namespace's)
    const n = await neighbour({ flip: { name: 'flip', a: '../plain', b: `/var/run/netns/${excluded}` } });
    const s = openSession(loadConfig({}, { stateDir: w.env.stateDir, sysfsRoot: w.env.sysfsRoot }));
    try {
      let scans = 0;
      const flipsBefore = n.flips();
      for (; scans < 150; scans++) {
        const scan = scanForStrays(s, [excludedId]);
        try {
          expect(scan.strays.map((x) => x.pciAddress), `scan ${scans}`).not.toContain('0000:af:00.1');
        } finally {
          scan.close();
        }
      }
      // the link really flipped all along
      expect(n.flips(), 'flips counted by the neighbour').toBeGreaterThan(flipsBefore);
    } finally {
      s.close();
    }
    expect(w.state(pf.name, excluded)).not.toBeNull();
  });
});
