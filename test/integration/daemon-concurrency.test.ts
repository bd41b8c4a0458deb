// The daemon runs calls at once: a call whose IPAM plugin is still working holds up no other pod's call,
// and a call waiting for a NIC's lock — held by another call of the daemon, or by another process (a CLI cleanup) —
// waits asleep, holding up no other pod's call either, then goes on once the lock is free. A real `sriovctl
// daemon`, the real shim, stand-in NICs and a stand-in IPAM plugin that allocates only when the test says so.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockNic, openLedger, type NicLock } from '../../src/ledger';
import { expectErrorShape, ledgerRecords, netnsPath, runCni, runCniAsync, type CniCall, type CniRoots } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import type { Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';

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

async function until(what: string, ready: () => boolean): Promise<void> {
  // a hang guard, not a measurement: generous for a busy machine
  for (let i = 0; i < 1200 && !ready(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!ready()) throw new Error(`gave up waiting: ${what}`);
}

/** The answer, or a failure naming what the daemon was still doing when it did not come. */
async function within<T>(what: string, p: Promise<T>, ms = 45_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s (calls held up?)`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

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
});
