// Promise variants (run on libuv pool threads) and the proof that no long-lived thread ever changes
// namespace: every thread that exists before a burst of cross-namespace work is still home after it.
import { readdirSync, readlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SysError, connect, createAnonymousNetns, readSysctl } from '../../src/net';
import { Scratch, linkJson } from '../helpers/kernel';

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

describe('async variants', () => {
  it('every operation resolves with what the sync one returns, and failures reject with SysError', async () => {
    const { name, ns, rtnl } = scratchNs('as');
    const other = scratchNs('ao');
    const [a, b] = scratch.veth('a', 'b', name);
    const link = await rtnl.async.getLink({ name: a });
    expect(link).toEqual(rtnl.getLink({ name: a }));
    await rtnl.async.setLink(link.index, { alias: 'async alias', up: true });
    expect(linkJson(a, name).ifalias).toBe('async alias');
    expect((await rtnl.async.listLinks()).map((l) => l.name).sort()).toEqual(['lo', a, b].sort());
    expect(await rtnl.async.findLink({ name: scratch.name('zz') })).toBeNull();
    await expect(rtnl.async.getLink({ index: 0x7ffffff0 })).rejects.toMatchObject({ code: 'ENODEV', op: 'RTM_GETLINK' });
    await expect(rtnl.async.getLink({ index: 0x7ffffff0 })).rejects.toBeInstanceOf(SysError);
    await rtnl.async.addAltname(link.index, scratch.name('alt'));
    expect((await rtnl.async.getLink({ index: link.index })).altnames).toEqual([scratch.name('alt')]);
    await rtnl.async.delAltname(link.index, scratch.name('alt'));
    await rtnl.async.addAddress(link.index, '192.0.2.1/24');
    expect((await rtnl.async.listAddresses({ index: link.index, family: 4 })).map((x) => x.cidr)).toEqual(['192.0.2.1/24']);
    await rtnl.async.addRoute({ dst: '198.51.100.0/24', gateway: '192.0.2.2' });
    expect((await rtnl.async.listRoutes({ family: 4 })).some((r) => r.dst === '198.51.100.0/24')).toBe(true);
    await rtnl.async.deleteRoute({ dst: '198.51.100.0/24', gateway: '192.0.2.2' });
    await rtnl.async.sendGratuitousArp(link.index, '192.0.2.1');
    await rtnl.async.deleteAddress(link.index, '192.0.2.1/24');
    expect(await rtnl.async.driverInfo(a)).toEqual({ driver: 'veth', busInfo: '' });
    expect(await rtnl.async.getVfs(link.index)).toEqual([]);
    await expect(rtnl.async.setVf(link.index, 0, { trust: true })).rejects.toMatchObject({ code: 'EOPNOTSUPP' });
    const f = scratch.name('f');
    await rtnl.async.addLink({ kind: 'ifb', name: f });
    const fl = await rtnl.async.getLink({ name: f });
    await rtnl.async.moveLink(fl.index, other.ns, { name: scratch.name('g') });
    expect(await other.rtnl.async.getLink({ name: scratch.name('g') })).toMatchObject({ kind: 'ifb' });
    await other.rtnl.async.deleteLink(other.rtnl.getLink({ name: scratch.name('g') }).index);
    expect(ns.fd).toBeGreaterThanOrEqual(0);
  });

  it('concurrent async calls on one socket never mix up replies (per-socket lock, sequence filter)', async () => {
    const { name, rtnl } = scratchNs('ac');
    const [a, b] = scratch.veth('a', 'b', name);
    const ia = rtnl.getLink({ name: a }).index;
    const ib = rtnl.getLink({ name: b }).index;
    // Pool threads run the calls in any order; what must hold is that every reply belongs to its request:
    // a's aliases are odd-numbered, b's even-numbered.
    const aliasOk = (index: number, alias: string | null) => alias === null || Number(alias.slice(1)) % 2 === (index === ia ? 1 : 0);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 400; i++) {
      const index = i % 2 ? ia : ib;
      work.push(rtnl.async.setLink(index, { alias: `n${i}` }));
      work.push(rtnl.async.getLink({ index }).then((l) => {
        expect(l.index).toBe(index);
        expect(aliasOk(index, l.alias)).toBe(true);
      }));
      if (i % 50 === 0) work.push(expect(rtnl.async.getLink({ index: 0x7ffffff0 })).rejects.toMatchObject({ code: 'ENODEV' }));
      if (i % 40 === 0) rtnl.setLink(index, { mtu: 1400 + (i % 100) }); // sync calls interleaved
    }
    await Promise.all(work);
    expect(aliasOk(ia, rtnl.getLink({ index: ia }).alias)).toBe(true);
    expect(aliasOk(ib, rtnl.getLink({ index: ib }).alias)).toBe(true);
    await rtnl.async.setLink(ia, { alias: 'n1001' });
    expect(rtnl.getLink({ index: ia }).alias).toBe('n1001');
  });
});

describe('threads never change namespace', () => {
  it('all threads that existed before a burst of cross-namespace sync+async work stay in our namespace', async () => {
    const home = readlinkSync('/proc/self/ns/net');
    const one = scratchNs('t1');
    const two = scratchNs('t2');
    const [a] = scratch.veth('a', 'b', one.name);
    const [c] = scratch.veth('c', 'd', two.name);
    // bring up the libuv pool first, so its threads are among those watched
    await Promise.all(Array.from({ length: 8 }, () => one.rtnl.async.listLinks()));
    const before = threadNamespaces();
    expect([...before.values()].every((n) => n === home)).toBe(true);

    const watched: string[] = [];
    const check = () => {
      const now = threadNamespaces();
      for (const [tid, n] of before) if (now.has(tid) && now.get(tid) !== home) watched.push(`${tid} in ${n}`);
    };
    for (let round = 0; round < 20; round++) {
      const pending: Promise<unknown>[] = [];
      for (const side of [one, two]) {
        const dev = side === one ? a : c;
        const index = side.rtnl.getLink({ name: dev }).index;
        side.rtnl.setLink(index, { alias: `r${round}` });
        pending.push(side.rtnl.async.setLink(index, { alias: `x${round}` }));
        pending.push(side.rtnl.async.getLink({ index }));
        pending.push(side.rtnl.async.driverInfo(dev));
        pending.push(side.rtnl.async.listAddresses());
        readSysctl(side.ns, 'net/ipv4/ip_forward');
        expect(side.rtnl.driverInfo(dev)).toEqual({ driver: 'veth', busInfo: '' });
        const extra = connect(side.ns);
        extra.listLinks();
        pending.push(extra.async.listLinks().finally(() => extra.close()));
      }
      const anon = createAnonymousNetns();
      const inAnon = connect(anon);
      pending.push(inAnon.async.getLink({ name: 'lo' }).finally(() => {
        inAnon.close();
        anon.close();
      }));
      check(); // while async work is in flight on the pool
      await Promise.all(pending);
    }
    check();
    const after = threadNamespaces();
    expect(watched).toEqual([]);
    expect([...after.entries()].filter(([, n]) => n !== home)).toEqual([]);
    expect([...before.keys()].filter((tid) => !after.has(tid))).toEqual([]); // main + pool threads all still there
  });
});
