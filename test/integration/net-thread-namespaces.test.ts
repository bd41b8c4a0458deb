// The proof that no long-lived thread ever changes namespace: every thread that exists before a burst of
// cross-namespace work (sockets made inside other namespaces, sysctls and ethtool there, calls there that fail,
// anonymous namespaces) is still home after it. The work runs on short-lived native threads that enter the namespace.
import { readdirSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SysError, connect, createAnonymousNetns, openNetns, readSysctl } from '../../src/net';
import { nsFdOf, workInFdOf } from '../../src/net/netns';
import { Scratch } from '../helpers/kernel';

let scratch: Scratch;
beforeEach(() => {
  scratch = new Scratch();
});
afterEach(() => scratch.cleanup());

const scratchNs = (suffix: string) => scratch.netnsWithRtnl(suffix);

/** tid → 'net:[inode]' for every thread of this process (threads may exit while we look). */
function threadNamespaces(): Map<string, string> {
  const out = new Map<string, string>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.set(tid, readlinkSync(`/proc/self/task/${tid}/ns/net`));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

describe('threads never change namespace', () => {
  it('all threads that existed before a burst of cross-namespace work stay in our namespace', async () => {
    const home = readlinkSync('/proc/self/ns/net');
    const one = scratchNs('t1');
    const two = scratchNs('t2');
    const [a] = scratch.veth('a', 'b', one.name);
    const [c] = scratch.veth('c', 'd', two.name);
    // bring up the libuv pool first, so its threads are among those watched
    await Promise.all(Array.from({ length: 8 }, () => readFile('/proc/self/status')));
    const before = threadNamespaces();
    expect([...before.values()].every((n) => n === home)).toBe(true);

    const watched: string[] = [];
    const check = () => {
      const now = threadNamespaces();
      for (const [tid, n] of before) if (now.has(tid) && now.get(tid) !== home) watched.push(`${tid} in ${n}`);
    };
    for (let round = 0; round < 20; round++) {
      for (const side of [one, two]) {
        const dev = side === one ? a : c;
        const index = side.rtnl.getLink({ name: dev }).index;
        side.rtnl.setLink(index, { alias: `r${round}` });
        readSysctl(side.ns, 'net/ipv4/ip_forward');
        // a call that fails inside the namespace comes back all the same
        expect(() => readSysctl(side.ns, `net/ipv4/conf/${dev}-none/forwarding`)).toThrow(SysError);
        expect(side.rtnl.driverInfo(dev)).toEqual({ driver: 'veth', busInfo: '' });
        const extra = connect(side.ns);
        extra.listLinks();
        extra.close();
        check();
      }
      const anon = createAnonymousNetns();
      const inAnon = connect(anon);
      inAnon.getLink({ name: 'lo' });
      inAnon.close();
      anon.close();
      check();
    }
    const after = threadNamespaces();
    expect(watched).toEqual([]);
    expect([...after.entries()].filter(([, n]) => n !== home)).toEqual([]);
    expect([...before.keys()].filter((tid) => !after.has(tid))).toEqual([]); // main + pool threads all still there
  });
});

describe('work in our own namespace', () => {
  it('named by a handle of it, runs on the calling thread; a handle of another, and a move target, keep their fd', () => {
    const own = openNetns('/proc/self/ns/net');
    const other = scratchNs('t3');
    try {
      expect(workInFdOf(own)).toBe(-1);
      expect(workInFdOf(null)).toBe(-1);
      expect(workInFdOf(other.ns)).toBe(other.ns.fd);
      // the kernel is handed the fd itself (IFLA_NET_NS_FD): never "ours"
      expect(nsFdOf(own)).toBe(own.fd);
      expect(readSysctl(own, 'net/ipv4/ip_forward')).toBe(readSysctl(null, 'net/ipv4/ip_forward'));
    } finally {
      own.close();
    }
    expect(() => workInFdOf(own)).toThrow(/already closed/);
  });
});
