// The daemon gives back, on its own, a CNI attachment whose DEL never came (Multus thick's shim answering DEL while
// its daemon is down, a crashed runtime): once the pod's namespace is gone and the NIC is back, a sweep brings the
// NIC home as it was — name, MAC, MTU, address — and drops its record, with no ADD, DEL or cleanup. A record whose
// namespace still exists, and an `attach` record whose target died (a person's: detach, cleanup), are left alone. A real
// `sriovctl daemon` with a one-second sweep, the real shim, a veth stand-in; the kernel's way with a physical NIC
// whose namespace dies (back to the initial namespace under its pod name) is done by the test.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ledgerRecords, netnsPath, runCniAsync, type CniCall } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import { sriovctl } from '../helpers/cli-process';
import { ip, ipJson } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

let w: CniPodWorld;
let nic: NicState;
let daemon: DaemonProcess | null = null;

useCniPodWorld((world) => ({ nic } = w = world), 'q0', { tempDir: 'sriovctl-sweep-' });

afterEach(async () => {
  await daemon?.stop(5000);
  daemon = null;
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
function podDiesWithoutDel(ifname: string): void {
  ip('-n', w.pod, 'link', 'set', ifname, 'netns', '1');
  ip('netns', 'del', w.pod);
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
