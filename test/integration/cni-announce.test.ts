// ADD announces the pod's addresses on the wire: a gratuitous ARP for its IPv4 address reaches the other end of
// the lent link (captured there with a packet socket), sent by the kernel when the link comes up with
// arp_notify on.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCniAsync, type CniRoots } from '../helpers/cni-run';
import { ip, Scratch } from '../helpers/kernel';
import { useCniWorld } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;

useCniWorld((w) => ({ s, roots } = w));

/** Listen for ARP on `ifname` (host namespace) until one from `spa` arrives; resolves with its operation. */
function captureGratuitousArp(ifname: string, spa: string, timeoutMs: number): { ready: Promise<void>; arp: Promise<string> } {
  const py = `
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
print("ready", flush=True)
want = socket.inet_aton(sys.argv[2]); end = time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        frame = s.recv(2048)
    except socket.timeout:
        continue
    arp = frame[14:]
    op, spa, tpa = struct.unpack("!H", arp[6:8])[0], arp[14:18], arp[24:28]
    if spa == want and tpa == want:
        print("garp", op, flush=True); sys.exit(0)
sys.exit(1)
`;
  const child = spawn('python3', ['-c', py, ifname, spa, String(timeoutMs / 1000)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let readyResolve!: () => void;
  const ready = new Promise<void>((r) => (readyResolve = r));
  child.stdout.on('data', (d) => {
    out += d.toString();
    if (out.includes('ready')) readyResolve();
  });
  s.onCleanup(() => child.kill('SIGKILL'));
  const arp = new Promise<string>((resolve, reject) =>
    // 'close', not 'exit': 'exit' can be emitted before the last line is read from the pipe
    child.on('close', (code) => (code === 0 ? resolve(out.trim().split('\n').pop()!) : reject(new Error(`no gratuitous ARP: ${out}`)))),
  );
  return { ready, arp };
}

describe('ADD announces the pod address', () => {
  it('the peer sees a gratuitous ARP for the pod IPv4 address, and arp_notify is on in the pod', async () => {
    const pod = s.netns('pod');
    const [nic, peer] = s.veth('n0', 'n0p');
    ip('link', 'set', peer, 'up');
    const capture = captureGratuitousArp(peer, '10.78.0.5', 60_000); // ends as soon as the ARP is seen
    await capture.ready;
    const config = {
      cniVersion: '1.0.0',
      name: `net-${s.prefix}`,
      type: 'sriovctl-cni',
      device: nic,
      ipam: { type: 'static', addresses: [{ address: '10.78.0.5/24' }] },
    };
    const add = await runCniAsync(
      { command: 'ADD', containerId: `ctr-${s.prefix}`, netns: `/var/run/netns/${pod}`, ifname: 'net1', config },
      roots,
    );
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(await capture.arp).toMatch(/^garp [12]$/);
    expect(ip('netns', 'exec', pod, 'cat', '/proc/sys/net/ipv4/conf/net1/arp_notify').trim()).toBe('1');
    const del = await runCniAsync(
      { command: 'DEL', containerId: `ctr-${s.prefix}`, netns: `/var/run/netns/${pod}`, ifname: 'net1', config },
      roots,
    );
    expect(del.status, del.stdout + del.stderr).toBe(0);
  });
});
