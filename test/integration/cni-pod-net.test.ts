// What the pod sees after ADD, where host-device and sriov-cni (through libcni's ConfigureIface) set the bar:
// the interface up without IPAM, IPv6 in a pod that had it disabled, IPv6 addresses past DAD, route scopes, and
// addresses announced when the carrier comes after link-up. The real executable, Debian's static IPAM.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEBIAN_CNI, netnsPath, ROOT, runCni, runCniAsync, type CniCall, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld } from '../helpers/cni-world';
import { ip, ipJson, Scratch, waitFor } from '../helpers/kernel';
import type { NicState } from '../helpers/lend-fixture';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'n0');

/** Debian's plugins, and the stand-in IPAM for CNI 1.1.0-only fields. */
const CNI_PATH_WITH_ECHO = `${join(ROOT, 'test', 'fixtures', 'cni')}:${DEBIAN_CNI}`;

function conf(extra: Record<string, unknown>, version = '1.1.0') {
  return { cniVersion: version, name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, ...extra };
}

function call(command: string, config: object, more: Partial<CniCall> = {}) {
  return runCni({ command, containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, ...more }, roots);
}

function addThenDel(config: object, check: () => void, more: Partial<CniCall> = {}) {
  const add = call('ADD', config, more);
  expect(add.status, add.stdout + add.stderr).toBe(0);
  check();
  const del = call('DEL', config, more);
  expect(del.status, del.stdout + del.stderr).toBe(0);
  return add;
}

const podLink = () => ipJson<any[]>('-n', pod, 'link', 'show', 'dev', 'net1')[0];
const podV6 = () => ipJson<any[]>('-n', pod, '-6', 'addr', 'show', 'dev', 'net1')[0]?.addr_info ?? [];
const inPod = (...cmd: string[]) => ip('netns', 'exec', pod, ...cmd);
const sysctl = (key: string) => inPod('cat', `/proc/sys/net/${key}`).trim();

describe('row 1: no IPAM', () => {
  for (const [label, extra] of [
    ['ipam absent', {}],
    ['ipam {}', { ipam: {} }],
  ] as const) {
    it(`${label}: the pod interface is up, as host-device and sriov-cni leave it`, () => {
      const add = addThenDel(conf(extra), () => {
        expect(podLink().flags).toContain('UP');
      });
      expect(add.json.ips).toBeUndefined();
    });
  }
});

describe('row 2: IPv6 in a pod with disable_ipv6=1', () => {
  it('turns IPv6 on for lo and the interface and sets keep_addr_on_down before adding the address', () => {
    for (const k of ['all', 'default', 'lo']) inPod('sysctl', '-qw', `net.ipv6.conf.${k}.disable_ipv6=1`);
    const ipam = { type: 'static', addresses: [{ address: '10.80.0.5/24' }, { address: 'fd80::5/64' }] };
    addThenDel(conf({ ipam }), () => {
      expect(sysctl('ipv6/conf/net1/disable_ipv6')).toBe('0');
      expect(sysctl('ipv6/conf/lo/disable_ipv6')).toBe('0');
      expect(sysctl('ipv6/conf/net1/keep_addr_on_down')).toBe('1');
      expect(podV6().map((a: any) => `${a.local}/${a.prefixlen}`)).toContain('fd80::5/64');
    });
  });
});

describe('row 13: IPv6 past DAD, route scope', () => {
  it('no IPv6 address is tentative when ADD returns (the link has carrier, so DAD runs)', () => {
    ip('link', 'set', nic.name + 'p', 'up');
    const ipam = { type: 'static', addresses: [{ address: 'fd81::5/64' }] };
    addThenDel(conf({ ipam }), () => {
      const v6 = podV6();
      expect(v6.map((a: any) => a.local)).toContain('fd81::5');
      expect(v6.filter((a: any) => a.tentative || a.dadfailed)).toEqual([]);
    });
  });

  it('an IPv6 address another host has fails DAD: ADD fails with 103 and the NIC goes home', () => {
    const peer = nic.name + 'p';
    ip('link', 'set', peer, 'up');
    ip('-6', 'addr', 'add', 'fd82::5/64', 'dev', peer, 'nodad');
    const ipam = { type: 'static', addresses: [{ address: 'fd82::5/64' }] };
    const add = call('ADD', conf({ ipam }));
    expect(add.status).not.toBe(0);
    expect(add.json.code, add.stdout).toBe(103);
    expect(add.json.msg).toMatch(/fd82::5\/64 failed duplicate address detection/);
    expect(ipJson<any[]>('link', 'show', 'dev', nic.name)[0].ifname).toBe(nic.name);
  });

  it("a route's scope is applied; a route without one gets universe scope as libcni's", () => {
    const result = {
      ips: [{ address: '10.83.0.5/24' }],
      routes: [
        { dst: '10.83.1.0/24', scope: 253 },
        { dst: '10.83.2.0/24' },
      ],
    };
    const add = addThenDel(
      conf({ ipam: { type: 'ipam-echo', result } }),
      () => {
        const routes = ipJson<any[]>('-n', pod, '-4', 'route', 'show', 'dev', 'net1');
        const scopeOf = (dst: string) => routes.find((r) => r.dst === dst)?.scope ?? 'global';
        expect(scopeOf('10.83.1.0/24')).toBe('link');
        expect(scopeOf('10.83.2.0/24')).toBe('global');
      },
      { cniPath: CNI_PATH_WITH_ECHO },
    );
    expect(add.json.routes).toEqual(result.routes);
  });
});

/**
 * Listen until an ARP with sender = target = `spa` arrives on `ifname` (a gratuitous ARP). The socket listens on
 * every interface of the namespace and filters by name: a packet socket cannot be bound to a link that is down.
 */
function captureGratuitousArp(ifname: string, spa: string, timeoutMs: number): { ready: Promise<void>; arp: Promise<void> } {
  const py = `
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
s.settimeout(0.2)
print("ready", flush=True)
want = socket.inet_aton(sys.argv[2]); end = time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        frame, src = s.recvfrom(2048)
    except socket.timeout:
        continue
    arp = frame[14:]
    if src[0] == sys.argv[1] and arp[14:18] == want and arp[24:28] == want:
        sys.exit(0)
sys.exit(1)
`;
  const child = spawn('python3', ['-c', py, ifname, spa, String(timeoutMs / 1000)], { stdio: ['ignore', 'pipe', 'inherit'] });
  s.onCleanup(() => child.kill('SIGKILL'));
  const ready = new Promise<void>((resolve) => child.stdout.on('data', (d) => String(d).includes('ready') && resolve()));
  const arp = new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('no gratuitous ARP')))));
  arp.catch(() => undefined); // a test that gave up on it must not leave an unhandled rejection
  return { ready, arp };
}

describe('row 12: carrier after link-up', () => {
  it('the address is announced once the carrier comes, though the kernel announced it without carrier', async () => {
    const peer = nic.name + 'p'; // down: the pod side has no carrier when ADD sets it up
    const capture = captureGratuitousArp(peer, '10.84.0.5', 60_000);
    await capture.ready;
    const config = conf({ ipam: { type: 'static', addresses: [{ address: '10.84.0.5/24' }] } });
    // a long bound so the test, not the machine's load, decides when the carrier comes
    const env = { SRIOVCTL_CNI_CARRIER_WAIT_MS: '60000' };
    const add = runCniAsync({ command: 'ADD', containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, env }, roots);
    await waitFor(() => ipJson<any[]>('-n', pod, 'link', 'show').find((l) => l.ifname === 'net1' && l.flags.includes('UP')), 30_000);
    ip('link', 'set', peer, 'up');
    const answer = await add;
    expect(answer.status, answer.stdout + answer.stderr).toBe(0);
    // sent before ADD returned, so it is already queued to the capture: a few seconds is plenty
    await Promise.race([capture.arp, new Promise((_, reject) => setTimeout(() => reject(new Error('no gratuitous ARP after ADD')), 5000))]);
    const del = call('DEL', config);
    expect(del.status, del.stdout + del.stderr).toBe(0);
  });
});
