// Every call of the real plugin ends within a bound, whatever it is handed: an IPAM plugin that closes its output
// and hangs (killed at SRIOVCTL_IPAM_TIMEOUT, the NIC given back), a state directory that cannot be created, a
// CNI_NETNS that is a FIFO or a device (refused at once, never opened), and a relative CNI_PATH entry (skipped).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEBIAN_CNI, expectErrorShape, hostLocalAllocations, ledgerRecords, netnsPath, runCni } from '../helpers/cni-run';
import { useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import { ipJson } from '../helpers/kernel';
import { nicState } from '../helpers/lend-fixture';

let world: CniPodWorld;
useCniPodWorld((w) => (world = w), 'n0');
const fixture = () => world;

/** Plugins and files every test shares: the hanging IPAM plugin, a FIFO, a data dir for host-local. */
let dir: string;
let dataDir: string;

/** An IPAM plugin that answers VERSION, then for any other verb closes stdin, stdout and stderr and sleeps. */
const HANGING_IPAM = `#!/bin/sh
if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}'; exit 0; fi
exec <&- >&- 2>&-
exec sleep 30
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cni-bounded-'));
  dataDir = join(dir, 'ipam-data');
  writeFileSync(join(dir, 'hang-ipam'), HANGING_IPAM);
  chmodSync(join(dir, 'hang-ipam'), 0o755);
  execFileSync('mkfifo', [join(dir, 'fifo')]);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const conf = (ipam: object) => ({ cniVersion: '1.0.0', name: `net-${fixture().s.prefix}`, type: 'sriovctl-cni', device: fixture().nic.name, ipam });
const podLinks = () => ipJson<any[]>('-n', fixture().pod, 'link', 'show').map((l) => l.ifname);

describe('bounded waits', () => {
  it('ADD with an IPAM plugin that closes its output and hangs: 104 at the deadline, the NIC home', () => {
    const { roots, pod, nic } = fixture();
    const t0 = Date.now();
    const a = runCni(
      { command: 'ADD', containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', cniPath: dir, config: conf({ type: 'hang-ipam' }), env: { SRIOVCTL_IPAM_TIMEOUT: '2' } },
      roots,
    );
    const err = expectErrorShape(a);
    expect(err.code, a.stdout).toBe(104);
    expect(err.msg).toContain('timed out after 2 s');
    // 2 s deadline; a generous margin for a busy machine (without the fix the call outlived the 30 s sleeper)
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(nicState(nic.name)).toEqual(nic);
    expect(podLinks()).toEqual(['lo']);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  it('a malformed SRIOVCTL_IPAM_TIMEOUT is an invalid environment (4), nothing changed', () => {
    const { roots, pod, nic } = fixture();
    const a = runCni(
      { command: 'ADD', containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', cniPath: dir, config: conf({ type: 'hang-ipam' }), env: { SRIOVCTL_IPAM_TIMEOUT: '2s' } },
      roots,
    );
    expect(expectErrorShape(a).code, a.stdout).toBe(4);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('STATUS with a state directory that cannot be created (/proc/…) fails at once with 50, naming it', () => {
    const { roots } = fixture();
    const t0 = Date.now();
    const a = runCni({ command: 'STATUS', config: { cniVersion: '1.1.0', name: 'n', type: 'sriovctl-cni' } }, { ...roots, stateDir: '/proc/sriovctl-nonexistent/state' });
    const err = expectErrorShape(a);
    expect(err.code, a.stdout).toBe(50);
    expect(err.msg).toContain('/proc/sriovctl-nonexistent/state');
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('ADD with a state directory that cannot be created fails at once, the NIC untouched', () => {
    const { roots, pod, nic } = fixture();
    const a = runCni(
      { command: 'ADD', containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config: conf({ type: 'host-local', dataDir, subnet: '10.93.0.0/24' }) },
      { ...roots, stateDir: '/proc/sriovctl-nonexistent' },
    );
    expect(expectErrorShape(a).msg).toContain('/proc/sriovctl-nonexistent');
    expect(nicState(nic.name)).toEqual(nic);
    expect(podLinks()).toEqual(['lo']);
  });

  it.each([
    ['a FIFO', () => join(dir, 'fifo'), 'a FIFO'],
    ['a character device', () => '/dev/null', 'a character device'],
  ])('CNI_NETNS that is %s: ADD refused at once (4), nothing opened or changed', (_what, path, kind) => {
    const { roots, nic } = fixture();
    const t0 = Date.now();
    const a = runCni({ command: 'ADD', containerId: 'c1', netns: path(), ifname: 'net1', config: conf({ type: 'host-local', dataDir, subnet: '10.93.0.0/24' }) }, roots);
    const err = expectErrorShape(a);
    expect(err.code, a.stdout).toBe(4);
    expect(`${err.msg} ${err.details}`).toContain(kind);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  it('CHECK of a live attachment with CNI_NETNS a FIFO: refused at once (4); the attachment stays and DEL ends it', () => {
    const { roots, pod, nic } = fixture();
    const ipam = { type: 'host-local', dataDir, ranges: [[{ subnet: '10.94.0.0/24' }]] };
    const call = { containerId: 'c4', ifname: 'net1', config: conf(ipam) };
    const add = runCni({ ...call, command: 'ADD', netns: netnsPath(pod) }, roots);
    expect(add.status, add.stdout).toBe(0);
    try {
      const t0 = Date.now();
      const check = runCni({ ...call, command: 'CHECK', netns: join(dir, 'fifo'), config: { ...conf(ipam), prevResult: add.json } }, roots);
      const err = expectErrorShape(check);
      expect(err.code, check.stdout).toBe(4);
      expect(`${err.msg} ${err.details}`).toContain('a FIFO');
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(podLinks()).toContain('net1');
    } finally {
      const del = runCni({ ...call, command: 'DEL', netns: netnsPath(pod) }, roots);
      expect(del.status, del.stdout).toBe(0);
    }
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('a relative CNI_PATH entry is skipped, not run (the plugin is found in the absolute entry after it)', () => {
    const { s, roots, pod, nic } = fixture();
    // a relative entry that, from the plugin's working directory, does hold a host-local
    const relDir = join(dir, 'rel');
    execFileSync('mkdir', ['-p', relDir]);
    symlinkSync(join(DEBIAN_CNI, 'host-local'), join(relDir, 'host-local'));
    const rel = relative(process.cwd(), relDir);
    expect(rel.startsWith('/')).toBe(false);
    const ipam = { type: 'host-local', dataDir, ranges: [[{ subnet: '10.93.0.0/24' }]] };
    const call = { containerId: 'c2', netns: netnsPath(pod), ifname: 'net1', config: conf(ipam) };
    const add = runCni({ ...call, command: 'ADD', cniPath: `${rel}:${DEBIAN_CNI}` }, roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(hostLocalAllocations(dataDir, `net-${s.prefix}`)).toHaveLength(1);
    const del = runCni({ ...call, command: 'DEL', cniPath: `${rel}:${DEBIAN_CNI}` }, roots);
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    // with only the relative entry there is no plugin to run: 104, not an internal error
    const only = runCni({ ...call, command: 'ADD', cniPath: rel }, roots);
    expect(expectErrorShape(only).code, only.stdout).toBe(104);
    expect(nicState(nic.name)).toEqual(nic);
  });
});
