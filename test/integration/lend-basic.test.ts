// The lending engine on real namespaces, with veth stand-ins: lend, give back, collisions, borrowers' changes.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRecords, giveBack, lend, whereIs } from '../helpers/engine';
import { ip, ipIn, Scratch, waitFor } from '../helpers/kernel';
import { isolatedRoots, nicState, standInNic } from '../helpers/lend-fixture';

let s: Scratch;
let roots: ReturnType<typeof isolatedRoots>;
const children: ChildProcess[] = [];

beforeEach(() => {
  s = new Scratch();
  roots = isolatedRoots();
});

afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  s.cleanup();
  roots.cleanup();
});

const path = (ns: string) => `/var/run/netns/${ns}`;

describe('lend and give back', () => {
  it('lends to a named namespace under a new name, configured, and gives it back exactly', async () => {
    const pod = s.netns('pod');
    const before = standInNic(s, 'n0');
    const { record, link } = lend({
      nic: { name: before.name },
      target: { path: path(pod) },
      owner: { kind: 'attach', target: 'test:one' },
      name: 'net1',
      mtu: 1300,
      mac: '02:00:00:aa:bb:cc',
    });
    expect(record.phase).toBe('lent');
    expect(link?.name).toBe('net1');
    expect(nicState(before.name)).toBeNull();
    expect(nicState('net1', pod)).toEqual({ name: 'net1', mac: '02:00:00:aa:bb:cc', mtu: 1300, up: true, altnames: [] });
    expect(findRecords({ owner: { kind: 'attach', target: 'test:one' } })).toHaveLength(1);

    const back = await giveBack(record.key);
    expect(back.outcome).toBe('returned');
    expect(back.name).toBe(before.name);
    expect(nicState(before.name)).toEqual(before);
    expect(nicState('net1', pod)).toBeNull();
    expect(findRecords()).toHaveLength(0);
    expect((await giveBack(record.key)).outcome).toBe('not-lent');
  });

  it("lends to a process's namespace given by pid", async () => {
    const child = spawn('unshare', ['--net', 'sleep', '3600'], { stdio: 'ignore' }); // killed after the test
    children.push(child);
    const pid = child.pid!;
    // the child is in its own namespace once unshare has run
    await waitFor(() => {
      try {
        return readlinkSync(`/proc/${pid}/ns/net`) !== readlinkSync('/proc/self/ns/net');
      } catch {
        return false;
      }
    });
    const before = standInNic(s, 'p0');
    const { record } = lend({ nic: { name: before.name }, target: { pid }, owner: { kind: 'attach', target: 'test:pid' } });
    expect(record.target.pid).toBe(pid);
    const inside = JSON.parse(
      execFileSync('nsenter', ['-t', String(pid), '-n', 'ip', '-j', 'link', 'show', before.name], {
        encoding: 'utf8',
      }),
    );
    expect(inside[0].ifname).toBe(before.name);
    expect((await giveBack(record.key)).outcome).toBe('returned');
    expect(nicState(before.name)).toEqual(before);
  });

  it('gives back to a non-initial home', async () => {
    const job = s.netns('job');
    const node = s.netns('node');
    const before = standInNic(s, 'h0', job);
    const { record } = lend({ nic: { name: before.name, in: { path: path(job) } }, target: { path: path(node) }, owner: { kind: 'attach', target: 'test:home' } });
    expect(record.home.initial).toBe(false);
    expect(nicState(before.name, node)?.up).toBe(true);
    expect((await giveBack(record.key)).outcome).toBe('returned');
    expect(nicState(before.name, job)).toEqual(before);
    expect(nicState(before.name, node)).toBeNull();
  });

  it("restores what the borrower changed: name, MTU, MAC, admin state", async () => {
    const pod = s.netns('pod');
    const before = standInNic(s, 'b0');
    const { record } = lend({ nic: { name: before.name }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:b' }, name: 'eth9' });
    ipIn(pod, 'link', 'set', 'eth9', 'down');
    ipIn(pod, 'link', 'set', 'eth9', 'name', 'renamed', 'mtu', '1280', 'address', '02:11:22:33:44:55');
    ipIn(pod, 'link', 'set', 'renamed', 'up');
    // status finds it exactly as give-back will: by its ifindex in the target, whatever else changed
    expect(whereIs(record)).toEqual({ place: 'target', name: 'renamed', namespace: path(pod) });
    expect((await giveBack(record.key)).outcome).toBe('returned');
    expect(nicState(before.name)).toEqual(before);
  });

  it('refuses a name taken in the target and changes nothing', () => {
    const pod = s.netns('pod');
    s.veth('busy', 'busyp', pod);
    const taken = s.prefix + 'busy';
    const before = standInNic(s, 'c0');
    expect(() => lend({ nic: { name: before.name }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:c' }, name: taken })).toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(nicState(before.name)).toEqual(before);
    expect(findRecords()).toHaveLength(0);
  });

  it('returns under a fallback name when the original was taken meanwhile, and says so', async () => {
    const pod = s.netns('pod');
    const before = standInNic(s, 'f0');
    const { record } = lend({ nic: { name: before.name }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:f' }, name: 'net1' });
    ip('link', 'add', before.name, 'type', 'veth', 'peer', 'name', s.prefix + 'fq');
    s.onCleanup(() => ip('link', 'del', before.name));
    const back = await giveBack(record.key);
    expect(back.outcome).toBe('returned-renamed');
    expect(back.name).not.toBe(before.name);
    expect(back.warnings.join(' ')).toContain('taken');
    const returned = nicState(back.name!)!;
    expect(returned.mac).toBe(before.mac);
    expect(returned.mtu).toBe(before.mtu);
    ip('link', 'del', back.name!);
    expect(findRecords()).toHaveLength(0);
  });

  it('drops an altname in the way and puts it back', async () => {
    const pod = s.netns('pod');
    const before0 = standInNic(s, 'a0');
    const own = s.prefix + 'alt';
    const clash = s.prefix + 'clash';
    ip('link', 'property', 'add', 'dev', before0.name, 'altname', own);
    ip('link', 'property', 'add', 'dev', before0.name, 'altname', clash);
    s.veth('clash', 'clashp', pod);
    const before = nicState(before0.name)!;
    // the new name is the NIC's own altname, and another altname is taken in the target
    const { record } = lend({ nic: { name: before.name }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:a' }, name: own });
    expect(record.droppedAltnames.sort()).toEqual([own, clash].sort());
    expect(nicState(own, pod)?.name).toBe(own);
    expect((await giveBack(record.key)).outcome).toBe('returned');
    expect(nicState(before.name)).toEqual(before);
  });

  it('reports a virtual NIC destroyed with its namespace as gone and drops the record', async () => {
    const pod = s.netns('gone');
    const before = standInNic(s, 'g0');
    const { record } = lend({ nic: { name: before.name }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:g' } });
    ip('netns', 'del', pod);
    const back = await giveBack(record.key);
    expect(whereIs(record).place).toBe('unknown');
    expect(back.outcome).toBe('gone');
    expect(findRecords()).toHaveLength(0);
  });

  it('refuses to lend a NIC that is already lent', async () => {
    const a = s.netns('a');
    const b = s.netns('b');
    const before = standInNic(s, 'd0');
    const { record } = lend({ nic: { name: before.name }, target: { path: path(a) }, owner: { kind: 'attach', target: 'test:d1' } });
    expect(() => lend({ nic: { name: before.name, in: { path: path(a) } }, target: { path: path(b) }, owner: { kind: 'attach', target: 'test:d2' } })).toThrow(
      expect.objectContaining({ code: 'BUSY' }),
    );
    expect((await giveBack(record.key, { owner: 'someone-else' })).outcome).toBe('not-lent');
    expect(nicState(before.name, a)).not.toBeNull();
    expect((await giveBack(record.key, { owner: { kind: 'attach', target: 'test:d1' } })).outcome).toBe('returned');
  });

  it('rejects bad input before any change', () => {
    const pod = s.netns('pod');
    const before = standInNic(s, 'v0');
    for (const bad of [{ name: 'x'.repeat(16) }, { mtu: 10 }, { mac: 'zz:00:00:00:00:00' }]) {
      expect(() => lend({ nic: { name: before.name }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:v' }, ...bad })).toThrow(TypeError);
    }
    expect(() => lend({ nic: { name: before.name }, target: { path: '/nonexistent/ns' }, owner: { kind: 'attach', target: 'test:v' } })).toThrow();
    expect(nicState(before.name)).toEqual(before);
    expect(findRecords()).toHaveLength(0);
  });
});
