// A NIC without carrier does not hold up an ADD through the daemon: the daemon answers at once and sends the
// gratuitous ARP for the pod's address when the carrier comes; the attachment's DEL, or the daemon's shutdown, before
// the carrier stops that watch, and nothing is sent into the NIC once it is home. The one-shot plugin keeps its
// bounded wait. A real `sriovctl daemon`, the real shim, a veth stand-in whose peer is down (no carrier) until the
// test sets it up; the announcements are captured on the peer with a packet socket.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { netnsPath, runCniAsync, type CniCall } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import { ip, waitFor } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

let w: CniPodWorld;
/** The world's NIC as it is at home (a test sets it up first). */
let nic: NicState;
let daemon: DaemonProcess | null = null;

useCniPodWorld((world) => ({ nic } = w = world), 'q0', { tempDir: 'sriovctl-late-carrier-' });

afterEach(async () => {
  await daemon?.stop(5000);
  daemon = null;
});

const ADDRESS = '10.95.0.5';
const sock = () => join(w.dir, 'run', 'cni.sock');
const peer = () => nic.name + 'p';
/** How long a capture listens for what must not come: many times the watch's slowest look (100 ms). */
const QUIET_MS = 1500;

function call(command: string, transport: 'shim' | 'oneshot' = 'shim'): CniCall {
  return {
    command,
    containerId: `ctr-${w.s.prefix}`,
    netns: netnsPath(w.pod),
    ifname: 'net1',
    config: deviceConf(w.s, nic, { type: 'static', addresses: [{ address: `${ADDRESS}/24` }] }),
    transport,
    env: transport === 'shim' ? { SRIOVCTL_SOCKET: sock() } : {},
  };
}

/**
 * Counts the gratuitous ARPs for `spa` that arrive on `ifname` until stopped. The socket listens on every interface
 * of the namespace and filters by name: a packet socket cannot be bound to a link that is down.
 */
function captureGratuitousArps(ifname: string, spa: string): { ready: Promise<void>; seen: () => number; first: Promise<void> } {
  const py = `
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
print("ready", flush=True)
want = socket.inet_aton(sys.argv[2])
while True:
    frame, src = s.recvfrom(2048)
    arp = frame[14:]
    if src[0] == sys.argv[1] and arp[14:18] == want and arp[24:28] == want:
        print("garp", flush=True)
`;
  const child = spawn('python3', ['-c', py, ifname, spa], { stdio: ['ignore', 'pipe', 'inherit'] });
  w.s.onCleanup(() => child.kill('SIGKILL'));
  let out = '';
  let count = 0;
  let resolveReady!: () => void;
  let resolveFirst!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  const first = new Promise<void>((r) => (resolveFirst = r));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    if (out.includes('ready')) resolveReady();
    count = out.split('\n').filter((l) => l === 'garp').length;
    if (count) resolveFirst();
  });
  return { ready, seen: () => count, first };
}

/** `p`, or a failure naming `what` after `ms` (a hang guard, not a measurement). */
async function within<T>(what: string, p: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function watchesEnded(running: DaemonProcess): Promise<void> {
  while ((await running.stats()).carrierWatches !== 0) await new Promise((r) => setTimeout(r, 20));
}

const quiet = () => new Promise((r) => setTimeout(r, QUIET_MS));
const peerHasCarrierOff = () => !ip('-o', 'link', 'show', 'dev', peer()).includes('state UP');

/** The capture listening, a daemon serving, and an ADD through it answered while the peer is still down. */
async function addWithoutCarrier(): Promise<{ capture: ReturnType<typeof captureGratuitousArps>; running: DaemonProcess }> {
  const capture = captureGratuitousArps(peer(), ADDRESS);
  await capture.ready;
  const running = (daemon = await startDaemon(sock()));
  // a caller's long carrier wait too: the daemon answers without one
  const add = await within('ADD through the daemon', runCniAsync({ ...call('ADD'), env: { ...call('ADD').env, SRIOVCTL_CNI_CARRIER_WAIT_MS: '600000' } }, w.roots));
  expect(add.status, add.stdout + add.stderr).toBe(0);
  expect(peerHasCarrierOff()).toBe(true); // so it was answered before the carrier came
  expect((await running.stats()).carrierWatches).toBe(1);
  return { capture, running };
}

describe('an ADD through the daemon on a NIC without carrier', () => {
  it('is answered before the carrier comes, and the address is announced when it does', async () => {
    const { capture, running } = await addWithoutCarrier();
    expect(capture.seen()).toBe(0);
    ip('link', 'set', peer(), 'up');
    await within('the gratuitous ARP after the carrier came', capture.first);
    await within('the watch ended', watchesEnded(running));
    expect(running.log()).toContain(`carrier came after ADD: announced ${ADDRESS} on net1`);
    const del = await runCniAsync(call('DEL'), w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('a DEL before the carrier stops the watch: nothing is announced into the NIC once it is home', async () => {
    // up at home, so it is given back up and gets the carrier there when the peer comes up
    ip('link', 'set', nic.name, 'up');
    nic = nicState(nic.name)!;
    const { capture, running } = await addWithoutCarrier();
    const del = await runCniAsync(call('DEL'), w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect((await running.stats()).carrierWatches).toBe(0);
    expect(running.log()).toMatch(/stopped watching for carrier: DEL/);
    expect(nicState(nic.name)).toEqual(nic);
    ip('link', 'set', peer(), 'up');
    await waitFor(() => !ip('-o', 'link', 'show', 'dev', nic.name).includes('NO-CARRIER'), 10_000);
    await quiet();
    expect(capture.seen()).toBe(0);
  });

  it("the daemon's shutdown stops the watch; the one-shot DEL gives the NIC back", async () => {
    const { capture, running } = await addWithoutCarrier();
    expect((await running.stop(10_000)).code).toBe(0);
    expect(running.log()).toMatch(/stopped watching for carrier: the daemon stops/);
    ip('link', 'set', peer(), 'up');
    await quiet();
    expect(capture.seen()).toBe(0);
    const del = await runCniAsync(call('DEL', 'oneshot'), w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('the one-shot plugin on a NIC without carrier', () => {
  it('keeps its bounded wait and announces nothing after it has answered', async () => {
    const capture = captureGratuitousArps(peer(), ADDRESS);
    await capture.ready;
    const add = await runCniAsync(call('ADD', 'oneshot'), w.roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.stderr).toMatch(/no carrier within 200 ms/);
    ip('link', 'set', peer(), 'up');
    await quiet();
    expect(capture.seen()).toBe(0);
    const del = await runCniAsync(call('DEL', 'oneshot'), w.roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
  });
});
