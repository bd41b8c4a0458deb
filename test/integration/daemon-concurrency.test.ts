// The daemon runs calls at once: a call whose IPAM plugin is still working holds up no other pod's call,
// and a call waiting for a NIC's lock — held by another call of the daemon, or by another process (a CLI cleanup) —
// waits asleep, holding up no other pod's call either, then goes on once the lock is free. A real `sriovctl
// daemon`, the real shim, stand-in NICs and a stand-in IPAM plugin that allocates only when the test says so.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockNic, openLedger, type NicLock } from '../../src/ledger';
import { expectErrorShape, ledgerRecords, netnsPath, runCni, runCniAsync, type CniCall, type CniRoots } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import { ip, ipJson, type Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { sameFile, until, within } from '../helpers/hang-guards';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dir: string;
let daemon: DaemonProcess | null = null;
let heldByTest: NicLock | null = null;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir } = w), 'k0', { tempDir: 'sriovctl-daemon-conc-' });

afterEach(async () => {
  heldByTest?.release();
  heldByTest = null;
  await daemon?.stop(5000);
  daemon = null;
});

const sock = () => join(dir, 'run', 'cni.sock');
const cniDir = () => join(dir, 'cni');
const startedFile = (id: string) => join(dir, `started-${id}`);
const releaseFile = (id: string) => join(dir, `release-${id}`);

/** A stand-in IPAM plugin (it looks at the pod's link, so it runs after the move): allocates once told to. */
function writeGatedIpam(): void {
  mkdirSync(cniDir(), { recursive: true });
  writeFileSync(
    join(cniDir(), 'gated'),
    `#!/bin/sh
[ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; }
cat >/dev/null
[ "$CNI_COMMAND" = ADD ] || exit 0
touch ${dir}/started-$CNI_CONTAINERID
i=0; while [ ! -e ${dir}/release-$CNI_CONTAINERID ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
echo '{"cniVersion":"1.0.0","ips":[{"address":"10.93.0.5/24"}]}'
`,
    { mode: 0o755 },
  );
  // the daemon's pool runs plugins from this dir, and static from Debian's
  writeFileSync(join(cniDir(), 'static'), `#!/bin/sh\nexec /usr/lib/cni/static "$@"\n`, { mode: 0o755 });
}

function call(command: string, id: string, podName: string, device: NicState, ipam: object): CniCall {
  return {
    command,
    containerId: id,
    netns: netnsPath(podName),
    ifname: 'net1',
    cniPath: cniDir(),
    config: deviceConf(s, device, ipam),
    transport: 'shim',
    env: { SRIOVCTL_SOCKET: sock() },
  };
}

const gated = { type: 'gated' };
const staticIpam = { type: 'static', addresses: [{ address: '10.94.0.5/24' }] };



/** The stand-in plugins and a daemon, and a second pod with a NIC of its own (the other pod's calls). */
async function startWithSecondPod(): Promise<{ running: DaemonProcess; pod2: string; nic2: NicState }> {
  writeGatedIpam();
  const running = (daemon = await startDaemon(sock()));
  return { running, pod2: s.netns('pod2'), nic2: standInNic(s, 'k1') };
}

/** While `waiting` waits for a lock, another pod's ADD and DEL each complete within `ms`; `waiting` is still waiting. */
async function anotherPodMeanwhile(waiting: Promise<unknown>, podName: string, device: NicState, ms: number): Promise<void> {
  let done = false;
  void waiting.then(() => (done = true));
  const add = await within('another pod ADD while a call waits for a lock', runCniAsync(call('ADD', 'c2', podName, device, staticIpam), roots), ms);
  expect(add.status, add.stdout + add.stderr).toBe(0);
  expect((await within('another pod DEL', runCniAsync(call('DEL', 'c2', podName, device, staticIpam), roots), ms)).status).toBe(0);
  expect(nicState(device.name)).toEqual(device);
  expect(done).toBe(false);
}

describe('the daemon runs calls at once', () => {
  it("an ADD whose IPAM plugin is still working holds up no other pod's ADD, DEL or VERSION", async () => {
    const { running, pod2, nic2 } = await startWithSecondPod();
    const slow = runCniAsync(call('ADD', 'c1', pod, nic, gated), roots);
    let slowDone = false;
    void slow.then(() => (slowDone = true));
    await until('the first ADD reaches its IPAM plugin', () => existsSync(startedFile('c1')));

    const other = await within('the second pod ADD', runCniAsync(call('ADD', 'c2', pod2, nic2, staticIpam), roots));
    expect(other.status, other.stdout + other.stderr).toBe(0);
    expect(nicState('net1', pod2)).toMatchObject({ mac: nic2.mac, up: true });
    const version = await within('VERSION', runCniAsync({ ...call('VERSION', 'c3', pod2, nic2, staticIpam) }, roots));
    expect(version.status).toBe(0);
    const otherDel = await within('the second pod DEL', runCniAsync(call('DEL', 'c2', pod2, nic2, staticIpam), roots));
    expect(otherDel.status, otherDel.stdout).toBe(0);
    expect(nicState(nic2.name)).toEqual(nic2);
    expect(slowDone).toBe(false); // all of that while the first ADD still waited on its plugin

    writeFileSync(releaseFile('c1'), '');
    const first = await within('the first ADD', slow);
    expect(first.status, first.stdout + first.stderr).toBe(0);
    expect(first.json.ips).toEqual([{ address: '10.93.0.5/24', interface: 0 }]);
    const del = runCni(call('DEL', 'c1', pod, nic, gated), roots);
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 2, DEL: 2, VERSION: 1 });
  });

  it("a DEL for a NIC whose ADD is still in the daemon waits for it, holding up no other pod's call, then gives the NIC back", async () => {
    const { pod2, nic2 } = await startWithSecondPod();
    const slow = runCniAsync(call('ADD', 'c1', pod, nic, gated), roots);
    await until('the ADD reaches its IPAM plugin', () => existsSync(startedFile('c1')));
    // the ADD holds the NIC's lock until it records its result; the runtime's DEL (a pod deleted while it starts)
    // waits for it as the one-shot plugin's would, up to 10 s
    const early = runCniAsync(call('DEL', 'c1', pod, nic, gated), roots);
    await anotherPodMeanwhile(early, pod2, nic2, 8000);
    writeFileSync(releaseFile('c1'), '');
    expect((await within('the ADD', slow)).status).toBe(0);
    const del = await within('the waiting DEL', early);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(nicState(nic2.name)).toEqual(nic2);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  it("a NIC another process holds (a CLI cleanup) is waited for asleep: other pods' calls go on; past the wait, 11 naming the holder", async () => {
    const { pod2, nic2 } = await startWithSecondPod();
    const add = runCni(call('ADD', 'c1', pod, nic, staticIpam), roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    const [record] = ledgerRecords(roots.stateDir);
    heldByTest = lockNic(openLedger(roots.stateDir), record.key, { timeoutMs: 0, holder: 'the test, as a cleanup' });

    // DEL waits up to 10 s for the holder; meanwhile the daemon serves another pod, start to end
    const del = runCniAsync(call('DEL', 'c1', pod, nic, staticIpam), roots);
    await anotherPodMeanwhile(del, pod2, nic2, 6000);
    heldByTest.release();
    heldByTest = null;
    const back = await within('the DEL once the lock is free', del);
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);

    // an ADD waits 2 s: held past that, it is 11 naming the holder, and the NIC stays home untouched
    heldByTest = lockNic(openLedger(roots.stateDir), record.key, { timeoutMs: 0, holder: 'the test, as a cleanup' });
    const refused = await within('the ADD of a held NIC', runCniAsync(call('ADD', 'c3', pod, nic, staticIpam), roots), 8000);
    const err = expectErrorShape(refused);
    expect(err.code).toBe(11);
    expect(err.msg).toContain('the test, as a cleanup');
    expect(err.msg).toMatch(/waited \d+ ms of 2000 ms/);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  it("a DEL waiting for its NIC's carrier at home (to make its nexthop again) holds up no other caller's VERSION", async () => {
    writeGatedIpam();
    const running = (daemon = await startDaemon(sock()));
    const { peer, nhid, home } = await nexthopAtHome();
    const add = runCni(call('ADD', 'c1', pod, nic, staticIpam), roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);

    // back home it finds no carrier (its peer is down): the give-back waits for it before making the nexthop
    ip('link', 'set', peer, 'down');
    const del = runCniAsync(call('DEL', 'c1', pod, nic, staticIpam), roots);
    let delDone = false;
    void del.then(() => (delDone = true));
    await until('the NIC home and up, waiting for carrier', () => nicState(nic.name)?.up === true);
    const version = await within('VERSION while a DEL waits for carrier', runCniAsync(call('VERSION', 'c3', pod, nic, staticIpam), roots));
    expect(version.status, version.stdout + version.stderr).toBe(0);
    expect(delDone).toBe(false);

    ip('link', 'set', peer, 'up');
    const back = await within('the DEL once the carrier is there', del);
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(home);
    expect(ipJson('nexthop', 'show', 'id', nhid)).toMatchObject([{ id: Number(nhid), dev: nic.name }]);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    // the daemon answered the VERSION itself (the shim sends a caller the daemon does not greet to the one-shot plugin)
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 1, DEL: 1, VERSION: 1 });
  });
});

describe("a failed ADD's rollback waits off the daemon's thread", () => {
  it("an ADD whose IPAM plugin fails after the move, its NIC back home waiting for carrier, holds up no other caller's VERSION", async () => {
    const running = (daemon = await startDaemon(sock()));
    const { peer, nhid, home } = await nexthopAtHome();
    // the plugin takes the peer's carrier down, then fails: the rollback finds the NIC home without carrier
    mkdirSync(cniDir(), { recursive: true });
    writeFileSync(
      join(cniDir(), 'failing'),
      `#!/bin/sh
[ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; }
cat >/dev/null
[ "$CNI_COMMAND" = ADD ] || exit 0
/usr/sbin/ip link set ${peer} down
touch ${dir}/ipam-failed
echo '{"cniVersion":"1.0.0","code":11,"msg":"no address for this test"}'
exit 1
`,
      { mode: 0o755 },
    );
    const add = runCniAsync(call('ADD', 'c1', pod, nic, { type: 'failing' }), roots);
    let addDone = false;
    void add.then(() => (addDone = true));
    await until('the NIC home and up, waiting for carrier', () => existsSync(join(dir, 'ipam-failed')) && nicState(nic.name)?.up === true);
    const version = await within('VERSION while a rollback waits for carrier', runCniAsync(call('VERSION', 'c3', pod, nic, staticIpam), roots));
    expect(version.status, version.stdout + version.stderr).toBe(0);
    expect(addDone).toBe(false);

    ip('link', 'set', peer, 'up');
    const failed = expectErrorShape(await within('the ADD once the carrier is there', add));
    expect(failed.msg).toContain('no address for this test');
    expect(nicState(nic.name)).toEqual(home);
    expect(ipJson('nexthop', 'show', 'id', nhid)).toMatchObject([{ id: Number(nhid), dev: nic.name }]);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    // the daemon answered the VERSION itself, while the rollback waited (one it does not greet goes to the one-shot plugin)
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 1, VERSION: 1 });
  });

  // The last write of an ADD (its record 'lent', with the result) fails: the lend is rolled back there and then. Here
  // the records directory is made immutable while the IPAM plugin runs (even root then creates no file in it), and
  // the plugin takes the peer's carrier down: the rollback finds the NIC home without carrier, and waits for it.
  it("an ADD whose attachment cannot be recorded (the seal's write fails), its NIC back home waiting for carrier, holds up no other caller's VERSION", async () => {
    const running = (daemon = await startDaemon(sock()));
    const { peer, nhid, home } = await nexthopAtHome();
    const records = join(roots.stateDir, 'records');
    s.onCleanup(() => {
      if (existsSync(records)) execFileSync('chattr', ['-i', records]);
    });
    mkdirSync(cniDir(), { recursive: true });
    writeFileSync(
      join(cniDir(), 'sealbreaker'),
      `#!/bin/sh
[ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; }
cat >/dev/null
[ "$CNI_COMMAND" = ADD ] || exit 0
/usr/sbin/ip link set ${peer} down
/usr/bin/chattr +i ${records}
touch ${dir}/records-frozen
echo '{"cniVersion":"1.0.0","ips":[{"address":"10.93.0.6/24"}]}'
`,
      { mode: 0o755 },
    );
    const add = runCniAsync(call('ADD', 'c1', pod, nic, { type: 'sealbreaker' }), roots);
    let addDone = false;
    void add.then(() => (addDone = true));
    await until('the NIC home and up, waiting for carrier', () => existsSync(join(dir, 'records-frozen')) && nicState(nic.name)?.up === true);
    // its record can be removed again once the NIC is home
    execFileSync('chattr', ['-i', records]);
    const version = await within('VERSION while a failed seal rolls back', runCniAsync(call('VERSION', 'c3', pod, nic, staticIpam), roots));
    expect(version.status, version.stdout + version.stderr).toBe(0);
    expect(addDone).toBe(false);

    ip('link', 'set', peer, 'up');
    const failed = expectErrorShape(await within('the ADD once the carrier is there', add));
    // the file system's refusal, said as the step that failed (102), not as a bug of ours (109)
    expect(failed.code).toBe(102);
    expect(failed.msg).toMatch(/^recording the attachment: \w+ \S*records\S*: operation not permitted \(EPERM\)/);
    expect(failed.details).toBe('EPERM');
    expect(nicState(nic.name)).toEqual(home);
    expect(ipJson('nexthop', 'show', 'id', nhid)).toMatchObject([{ id: Number(nhid), dev: nic.name }]);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    // the daemon answered the VERSION itself, while the rollback waited (one it does not greet goes to the one-shot plugin)
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 1, VERSION: 1 });
  });
});

describe('a search of the machine for a namespace runs off the daemon\'s thread', () => {
  let keeper: ChildProcess | null = null;
  afterEach(() => {
    keeper?.kill('SIGKILL');
    keeper = null;
  });

  // The pod's namespace lives on, held by a process, its name gone: the record's hints reach it no more, so a look
  // at it searches the machine. The daemon's pause point holds whichever thread runs that search.
  it("ADD's 'abandoned?' look at a holder's namespace and CHECK's hold up no other caller's VERSION", async () => {
    writeGatedIpam();
    const pauseDir = join(dir, 'pause');
    mkdirSync(pauseDir);
    const reached = join(pauseDir, 'reached');
    const release = join(pauseDir, 'release');
    const running = (daemon = await startDaemon(sock(), { SRIOVCTL_PAUSE: 'namespace-search', SRIOVCTL_PAUSE_DIR: pauseDir }));
    const add = await runCniAsync(call('ADD', 'c1', pod, nic, staticIpam), roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(existsSync(reached)).toBe(false); // an ADD of a free NIC searches nothing
    keeper = spawn('ip', ['netns', 'exec', pod, 'sleep', '600'], { stdio: 'ignore' });
    const podNetns = `/proc/${keeper.pid}/ns/net`;
    await until('the keeper in the pod', () => sameFile(podNetns, netnsPath(pod)));
    ip('netns', 'del', pod);

    /** While `verb` is held in its search, the daemon answers a VERSION itself (the shim sends a caller it does not greet to the one-shot plugin); then it goes on. */
    let versions = 0;
    const heldMeanwhile = async (verb: Promise<CniResultOf>) => {
      let done = false;
      void verb.then(() => (done = true));
      await until('the search reached', () => existsSync(reached));
      const version = await within('VERSION while a search is held', runCniAsync(call('VERSION', 'c3', pod, nic, staticIpam), roots));
      expect(version.status, version.stdout + version.stderr).toBe(0);
      expect(done).toBe(false);
      writeFileSync(release, '');
      const answer = await within('the held call', verb);
      expect((await running.stats()).requests.byVerb.VERSION).toBe(++versions);
      rmSync(reached);
      rmSync(release);
      return answer;
    };

    // another pod's ADD of the NIC: lent to c1, whose namespace lives on (found by the search): refused, not taken
    const pod2 = s.netns('pod2');
    const refused = expectErrorShape(await heldMeanwhile(runCniAsync(call('ADD', 'c2', pod2, nic, staticIpam), roots)));
    expect(refused.msg).toContain('c1');
    expect(refused.msg).not.toContain('its namespace is gone');

    // c1's CHECK names its namespace as the runtime holds it now
    const checked = await heldMeanwhile(
      runCniAsync({ ...call('CHECK', 'c1', pod, nic, staticIpam), netns: podNetns, config: { ...deviceConf(s, nic, staticIpam), prevResult: add.json } }, roots),
    );
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 2, CHECK: 1, VERSION: 2 });

    const del = runCni({ ...call('DEL', 'c1', pod, nic, staticIpam), netns: podNetns, transport: 'oneshot' }, roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  // A one-shot ADD killed right after writing its record leaves it on the NIC, still home; the pod it named is gone,
  // so finishing that record searches the machine for it (the NIC might be there). The daemon searches off its thread.
  it("an ADD finishing a record a crash left on its NIC holds up no other caller's VERSION while it searches", async () => {
    writeGatedIpam();
    const killed = runCni({ ...call('ADD', 'c1', pod, nic, staticIpam), transport: 'oneshot', env: { SRIOVCTL_FAILPOINT: 'lend:recorded' } }, roots);
    expect(killed.signal).toBe('SIGKILL');
    expect(ledgerRecords(roots.stateDir)).toHaveLength(1);
    ip('netns', 'del', pod);
    const pauseDir = join(dir, 'pause');
    mkdirSync(pauseDir);
    const running = (daemon = await startDaemon(sock(), { SRIOVCTL_PAUSE: 'namespace-search', SRIOVCTL_PAUSE_DIR: pauseDir }));
    const pod2 = s.netns('pod2');
    const add = runCniAsync(call('ADD', 'c2', pod2, nic, staticIpam), roots);
    let done = false;
    void add.then(() => (done = true));
    await until('the search reached', () => existsSync(join(pauseDir, 'reached')));
    const version = await within('VERSION while a search is held', runCniAsync(call('VERSION', 'c3', pod2, nic, staticIpam), roots));
    expect(version.status, version.stdout + version.stderr).toBe(0);
    expect(done).toBe(false);
    writeFileSync(join(pauseDir, 'release'), '');
    const added = await within('the ADD', add);
    expect(added.status, added.stdout + added.stderr).toBe(0);
    // the daemon answered the VERSION itself (one it does not greet goes to the one-shot plugin)
    expect((await running.stats()).requests.byVerb).toEqual({ ADD: 1, VERSION: 1 });
    expect(runCni(call('DEL', 'c2', pod2, nic, staticIpam), roots).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });
});

/** The NIC with a nexthop object at home (the kernel takes one only on a link with carrier: its peer's up). */
async function nexthopAtHome(): Promise<{ peer: string; nhid: string; home: NicState }> {
  const peer = `${nic.name}p`;
  ip('link', 'set', peer, 'up');
  ip('link', 'set', nic.name, 'up');
  const nhid = String(100_000 + Math.floor(Math.random() * 900_000));
  await until('carrier on the NIC', () => hasCarrier(nic.name));
  ip('nexthop', 'add', 'id', nhid, 'dev', nic.name);
  return { peer, nhid, home: nicState(nic.name)! };
}

type CniResultOf = Awaited<ReturnType<typeof runCniAsync>>;


function hasCarrier(link: string): boolean {
  return (ipJson('link', 'show', 'dev', link)[0]?.flags as string[]).includes('LOWER_UP');
}
