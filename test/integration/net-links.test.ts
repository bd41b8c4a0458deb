// Namespaces and links against the real kernel: scratch namespaces, veth/macvlan/ifb as stand-in NICs.
import { closeSync, mkdtempSync, openSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SysError,
  connect,
  createAnonymousNetns,
  currentNetns,
  openNetns,
  openNetnsOfPid,
  sameNetns,
  type Rtnl,
} from '../../src/net';
import { lockFd, unlockFd } from '../../src/fs/flock';
import { initialRef } from '../../src/lend/namespaces';
import { Scratch, ipJson, linkJson, waitFor } from '../helpers/kernel';

let scratch: Scratch;
beforeEach(() => {
  scratch = new Scratch();
});
afterEach(() => scratch.cleanup());

const scratchNs = (suffix: string) => scratch.netnsWithRtnl(suffix);

function sysError(fn: () => unknown): SysError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SysError) return err;
    throw err;
  }
  throw new Error('expected a SysError');
}

describe('namespaces', () => {
  it('opens by path, pid, current and initial; identity is the nsfs dev+inode', () => {
    const { name } = scratchNs('n');
    const ns = openNetns(`/var/run/netns/${name}`);
    const st = statSync(`/var/run/netns/${name}`);
    expect(ns.id).toEqual({ dev: st.dev, ino: st.ino });
    const self = openNetnsOfPid(process.pid);
    const current = currentNetns();
    const initial = openNetns(initialRef().path!); // as the engine reaches it
    const stSelf = statSync('/proc/self/ns/net');
    expect(sameNetns(self.id, current.id)).toBe(true);
    expect(current.id).toEqual({ dev: stSelf.dev, ino: stSelf.ino });
    let initialIno: number;
    try {
      initialIno = statSync('/proc/1/ns/net').ino;
    } catch {
      initialIno = 0xeffffff9; // pid 1 unreadable here: init_net's fixed inode (PROC_NET_INIT_INO)
    }
    expect(initial.id.ino).toBe(initialIno);
    expect(sameNetns(ns.id, current.id)).toBe(false);
    for (const n of [ns, self, current, initial]) n.close();
    expect(ns.fd).toBe(-1);
    ns.close(); // idempotent
  });

  it('refuses what is not a network namespace', () => {
    expect(sysError(() => openNetns('/proc/self/ns/uts'))).toMatchObject({ code: 'EINVAL' });
    expect(sysError(() => openNetns('/etc/hostname'))).toMatchObject({ code: 'EINVAL' });
    expect(sysError(() => openNetns('/nonexistent/ns'))).toMatchObject({ code: 'ENOENT', errno: 2 });
  });

  it('an anonymous namespace has lo up and vanishes when its fd closes', async () => {
    const host = scratchNs('h');
    const anon = createAnonymousNetns();
    scratch.onCleanup(() => anon.close());
    expect(anon.path).toBeNull();
    const inside = connect(anon);
    expect(inside.getLink({ name: 'lo' }).up).toBe(true);
    inside.close();

    // a veth pair across the two: the host end lives exactly as long as the anonymous namespace
    const hostEnd = scratch.name('ah');
    host.rtnl.addLink({ kind: 'veth', name: hostEnd, peer: { name: 'inside0', ns: anon } });
    expect(linkJson(hostEnd, host.name)).not.toBeNull();
    const inode = anon.id.ino;
    const nsLinks = () => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
      try {
        return [readlinkSync(`/proc/${pid}/ns/net`)];
      } catch {
        return [];
      }
    });
    anon.close();
    await waitFor(() => linkJson(hostEnd, host.name) === null);
    expect(nsLinks()).not.toContain(`net:[${inode}]`);
  });
});

describe('links', () => {
  it('reads a link by name and index as ip sees it; lists links', () => {
    const { name, rtnl } = scratchNs('r');
    const [a, b] = scratch.veth('a', 'b', name);
    const link = rtnl.getLink({ name: a });
    const ipView = linkJson(a, name);
    const peer = linkJson(b, name);
    expect(link).toMatchObject({
      index: ipView.ifindex,
      name: a,
      mac: ipView.address,
      mtu: ipView.mtu,
      kind: 'veth',
      alias: null,
      altnames: [],
      parentIndex: peer.ifindex,
      up: false,
      operstate: 'down',
    });
    expect(link.permMac).toBeNull();
    expect(rtnl.getLink({ index: link.index })).toEqual(link);
    expect(rtnl.listLinks().map((l) => l.name).sort()).toEqual(['lo', a, b].sort());
  });

  it('sets exactly what it is given: alias, mtu, mac, up/down, name, and several in one request', () => {
    const { name, rtnl } = scratchNs('s');
    const [a, b] = scratch.veth('a', 'b', name);
    const index = rtnl.getLink({ name: a }).index;
    rtnl.setLink(index, { alias: 'lent to pod x' });
    expect(linkJson(a, name).ifalias).toBe('lent to pod x');
    rtnl.setLink(index, { mtu: 1400 });
    expect(linkJson(a, name).mtu).toBe(1400);
    rtnl.setLink(index, { mac: '02:AA:00:00:00:01' });
    expect(linkJson(a, name).address).toBe('02:aa:00:00:00:01');
    rtnl.setLink(index, { up: true });
    expect(linkJson(a, name).flags).toContain('UP');
    rtnl.setLink(index, { up: false });
    expect(linkJson(a, name).flags).not.toContain('UP');
    const renamed = scratch.name('r');
    rtnl.setLink(index, { name: renamed });
    expect(linkJson(a, name)).toBeNull();
    expect(linkJson(renamed, name).ifindex).toBe(index);
    rtnl.setLink(index, { name: a, mtu: 1300, alias: '' });
    const after = rtnl.getLink({ index });
    expect(after).toMatchObject({ name: a, mtu: 1300, mac: '02:aa:00:00:00:01' });
    expect(linkJson(b, name).mtu).toBe(1500); // the peer was not touched
  });

  it('rename collision → EEXIST, missing link → ENODEV, as SysErrors with op (and the kernel message when given)', () => {
    const { name, rtnl } = scratchNs('e');
    const [a, b] = scratch.veth('a', 'b', name);
    const index = rtnl.getLink({ name: a }).index;
    const exists = sysError(() => rtnl.setLink(index, { name: b }));
    expect(exists).toMatchObject({ code: 'EEXIST', errno: 17, op: 'RTM_NEWLINK set name' });
    expect(exists.describe()).toContain('RTM_NEWLINK set name: File exists (EEXIST)');
    expect(linkJson(a, name)).not.toBeNull();

    const missing = sysError(() => rtnl.getLink({ index: 0x7ffffff0 }));
    expect(missing).toMatchObject({ code: 'ENODEV', errno: 19, op: 'RTM_GETLINK' });
    expect(sysError(() => rtnl.getLink({ name: scratch.name('zz') }))).toMatchObject({ code: 'ENODEV' });
    expect(rtnl.findLink({ name: scratch.name('zz') })).toBeNull();
    expect(sysError(() => rtnl.setLink(0x7ffffff0, { mtu: 1400 }))).toMatchObject({ code: 'ENODEV', op: 'RTM_NEWLINK set mtu' });
    expect(sysError(() => rtnl.deleteLink(0x7ffffff0))).toMatchObject({ code: 'ENODEV', op: 'RTM_DELLINK' });
    // an error the kernel explains: its extended-ack text is carried along
    const explained = sysError(() => rtnl.setLink(index, { mtu: 10 }));
    expect(explained).toMatchObject({ code: 'EINVAL', op: 'RTM_NEWLINK set mtu', kernelMessage: 'mtu less than device minimum' });
    expect(explained.describe()).toBe('RTM_NEWLINK set mtu: Invalid argument (EINVAL): mtu less than device minimum');
  });

  it('deletes a whole link group in one request, and nothing outside it', () => {
    const { name, rtnl } = scratchNs('grp');
    for (const i of [0, 1, 2]) rtnl.addLink({ kind: 'veth', name: `g${i}`, group: 4242, peer: { name: `g${i}p` } });
    rtnl.addLink({ kind: 'veth', name: 'other', peer: { name: 'otherp' } });
    expect(ipJson<any[]>('-n', name, '-d', 'link', 'show', 'dev', 'g1')[0].group).toBe('4242');
    rtnl.deleteLinkGroup(4242);
    const left = rtnl.listLinks().map((l) => l.name).sort();
    expect(left).toEqual(['lo', 'other', 'otherp']);
    // group 0 is every link's default group: never a valid target
    expect(() => rtnl.deleteLinkGroup(0)).toThrow(TypeError);
  });

  it('moves a link to another namespace and renames it in the same request', () => {
    const src = scratchNs('ms');
    const dst = scratchNs('md');
    const [a] = scratch.veth('a', 'b', src.name);
    const index = src.rtnl.getLink({ name: a }).index;
    const moved = scratch.name('mv');
    src.rtnl.moveLink(index, dst.ns, { name: moved });
    expect(linkJson(a, src.name)).toBeNull();
    const movedIndex = dst.rtnl.getLink({ name: moved }).index;
    expect(dst.rtnl.getLink({ index: movedIndex }).kind).toBe('veth');

    // A rename that collides in the target fails with EEXIST. The kernel applies the move before the
    // rename inside that one request, so the link may already be in the target under its old name:
    // it is never lost and never takes the colliding name (callers re-resolve after an error).
    const [c] = scratch.veth('c', 'd', src.name);
    const cIndex = src.rtnl.getLink({ name: c }).index;
    expect(sysError(() => src.rtnl.moveLink(cIndex, dst.ns, { name: moved }))).toMatchObject({ code: 'EEXIST', op: 'RTM_NEWLINK move+rename' });
    const whereC = [src, dst].filter((side) => side.rtnl.findLink({ name: c }) !== null);
    expect(whereC).toHaveLength(1);
    expect(dst.rtnl.getLink({ name: moved }).index).toBe(movedIndex); // the name still belongs to the first link

    // and back without a rename
    const back = dst.rtnl.getLink({ name: moved }).index;
    dst.rtnl.moveLink(back, src.ns);
    expect(linkJson(moved, src.name)).not.toBeNull();
  });

  it('startMoveLink moves off the JS thread: the thread runs meanwhile, the handle\'s other calls are never interleaved with it, a failure rejects', async () => {
    const src = scratchNs('as');
    const dst = scratchNs('ad');
    const [a] = scratch.veth('a', 'b', src.name);
    const index = src.rtnl.getLink({ name: a }).index;
    const moved = scratch.name('am');
    // the target's fd may be closed once the call returns: the addon keeps its own copy until the move is made
    const target = openNetns(`/var/run/netns/${dst.name}`);
    let settled = false;
    const move = src.rtnl.startMoveLink(index, target, { name: moved }).finally(() => (settled = true));
    target.close();
    // the kernel's RCU barrier alone takes milliseconds: the event loop turns while the move is under way
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    await move;
    expect(dst.rtnl.getLink({ name: moved }).kind).toBe('veth');
    expect(linkJson(a, src.name)).toBeNull();
    // a failure is the same SysError moveLink throws
    await expect(src.rtnl.startMoveLink(index, dst.ns, { name: moved })).rejects.toMatchObject({ code: 'ENODEV', op: 'RTM_NEWLINK move+rename' });
    // a bad argument is refused before anything is sent, as moveLink refuses it
    expect(() => src.rtnl.startMoveLink(index, dst.ns, { name: 'x'.repeat(16) })).toThrow(/invalid interface name/);
    // a call on the same socket while a move is queued or under way there runs before it or after it, never
    // interleaved: its reply is its own (the link as it was, or gone)
    const [e] = scratch.veth('e', 'f', src.name);
    const eIndex = src.rtnl.getLink({ name: e }).index;
    const third = src.rtnl.startMoveLink(eIndex, dst.ns);
    for (let i = 0; i < 20; i++) expect([e, null]).toContain(src.rtnl.findLink({ index: eIndex })?.name ?? null);
    await third;
    expect(dst.rtnl.getLink({ name: e }).kind).toBe('veth');
    // closed while a move is in flight: the move finishes first (the socket is never closed under it)
    const [c] = scratch.veth('c', 'd', src.name);
    const cIndex = src.rtnl.getLink({ name: c }).index;
    const second = src.rtnl.startMoveLink(cIndex, dst.ns);
    src.rtnl.close();
    await second.catch(() => undefined);
    expect(sysError(() => src.rtnl.listLinks())).toMatchObject({ code: 'EBADF' });
  });

  it('adds and deletes altnames; renaming to another link\'s altname → EEXIST', () => {
    const { name, rtnl } = scratchNs('al');
    const [a, b] = scratch.veth('a', 'b', name);
    const ia = rtnl.getLink({ name: a }).index;
    const ib = rtnl.getLink({ name: b }).index;
    const alt = `${scratch.prefix}-a-long-alternative-name`;
    const short = scratch.name('alt');
    rtnl.addAltname(ia, alt);
    rtnl.addAltname(ia, short);
    expect(rtnl.getLink({ index: ia }).altnames).toEqual([alt, short]);
    expect(ipJson<any[]>('-n', name, 'link', 'show', 'dev', a)[0].altnames).toEqual([alt, short]);
    expect(rtnl.getLink({ name: alt }).index).toBe(ia);
    expect(sysError(() => rtnl.setLink(ib, { name: short }))).toMatchObject({ code: 'EEXIST', op: 'RTM_NEWLINK set name' });
    expect(sysError(() => rtnl.addAltname(ib, short))).toMatchObject({ code: 'EEXIST', op: 'RTM_NEWLINKPROP add altname' });
    rtnl.delAltname(ia, short);
    expect(rtnl.getLink({ index: ia }).altnames).toEqual([alt]);
    rtnl.setLink(ib, { name: short });
    expect(rtnl.getLink({ index: ib }).name).toBe(short);
    expect(sysError(() => rtnl.delAltname(ia, short))).toBeInstanceOf(SysError);
  });

  it('creates veth (peer in another namespace), macvlan and ifb links, and deletes them', () => {
    const one = scratchNs('c1');
    const two = scratchNs('c2');
    const v = scratch.name('v');
    const p = scratch.name('p');
    one.rtnl.addLink({ kind: 'veth', name: v, mac: '02:00:00:00:0a:01', mtu: 1450, peer: { name: p, ns: two.ns, mac: '02:00:00:00:0a:02' } });
    expect(linkJson(v, one.name)).toMatchObject({ address: '02:00:00:00:0a:01', mtu: 1450 });
    expect(linkJson(p, two.name)).toMatchObject({ address: '02:00:00:00:0a:02', mtu: 1450 });
    expect(linkJson(p, one.name)).toBeNull();
    const vl = one.rtnl.getLink({ name: v });
    expect(vl.linkNetnsId).toBeTypeOf('number'); // the peer lives in another namespace

    const m = scratch.name('m');
    one.rtnl.addLink({ kind: 'macvlan', name: m, parentIndex: vl.index, mode: 'private' });
    const ml = linkJson(m, one.name);
    expect(ml.linkinfo.info_kind).toBe('macvlan');
    expect(ml.linkinfo.info_data.mode).toBe('private');
    expect(one.rtnl.getLink({ name: m }).parentIndex).toBe(vl.index);

    const f = scratch.name('f');
    one.rtnl.addLink({ kind: 'ifb', name: f });
    expect(one.rtnl.getLink({ name: f }).kind).toBe('ifb');
    expect(sysError(() => one.rtnl.addLink({ kind: 'ifb', name: f }))).toMatchObject({ code: 'EEXIST', op: 'RTM_NEWLINK create ifb' });

    for (const n of [m, f, v]) one.rtnl.deleteLink(one.rtnl.getLink({ name: n }).index);
    expect(one.rtnl.listLinks().map((l) => l.name)).toEqual(['lo']);
    expect(linkJson(p, two.name)).toBeNull(); // deleting one end of a veth deletes the pair
  });

  it('dummy links: created where the kernel has the driver, otherwise the kernel says why', () => {
    const { name, rtnl } = scratchNs('du');
    const d = scratch.name('d');
    try {
      rtnl.addLink({ kind: 'dummy', name: d });
      expect(linkJson(d, name).linkinfo.info_kind).toBe('dummy');
    } catch (err) {
      expect(err).toMatchObject({ code: 'EOPNOTSUPP', op: 'RTM_NEWLINK create dummy', kernelMessage: 'Unknown device type' });
    }
  });

  it('driverInfo via ethtool inside the namespace; null for a missing link', () => {
    const { name, rtnl } = scratchNs('di');
    const [a] = scratch.veth('a', 'b', name);
    expect(rtnl.driverInfo(a)).toEqual({ driver: 'veth', busInfo: '' });
    expect(rtnl.driverInfo(scratch.name('zz'))).toBeNull();
    // the same name does not exist in our own namespace: the ioctl really ran inside
    expect(connectOwn().driverInfo(a)).toBeNull();
  });

  it('VF calls reach the kernel: a veth has no VF table and refuses VF settings', () => {
    const { name, rtnl } = scratchNs('vf');
    const [a] = scratch.veth('a', 'b', name);
    const index = rtnl.getLink({ name: a }).index;
    expect(rtnl.getVfs(index)).toEqual([]);
    expect(rtnl.getLink({ index }, { vfs: true }).vfs ?? []).toEqual([]);
    expect(sysError(() => rtnl.setVf(index, 0, { mac: '02:00:00:00:00:01' }))).toMatchObject({ code: 'EOPNOTSUPP', op: 'RTM_NEWLINK set vf mac' });
    expect(sysError(() => rtnl.setVf(index, 0, { vlan: 10, qos: 0, proto: '802.1ad' }))).toMatchObject({ op: 'RTM_NEWLINK set vf vlan' });
  });

  it('a closed Rtnl fails with EBADF instead of touching another socket', () => {
    const { rtnl } = scratchNs('cl');
    rtnl.close();
    expect(sysError(() => rtnl.listLinks())).toMatchObject({ code: 'EBADF' });
    rtnl.close(); // idempotent
  });
});

let own: Rtnl | null = null;
function connectOwn(): Rtnl {
  own ??= connect();
  return own;
}
afterEach(() => {
  own?.close();
  own = null;
});

describe('flock with a timeout', () => {
  it('exclusive and shared locks time out against another open file description', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sriovctl-net-lock-'));
    const file = join(dir, 'lock');
    const fd1 = openSync(file, 'w');
    const fd2 = openSync(file, 'r');
    try {
      expect(lockFd(fd1, { exclusive: true, timeoutMs: 0 })).toBe(true);
      const t0 = Date.now();
      expect(lockFd(fd2, { exclusive: true, timeoutMs: 80 })).toBe(false);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(75);
      expect(lockFd(fd2, { exclusive: false, timeoutMs: 10 })).toBe(false);
      unlockFd(fd1);
      expect(lockFd(fd2, { exclusive: false, timeoutMs: 10 })).toBe(true);
      expect(lockFd(fd1, { exclusive: false, timeoutMs: 10 })).toBe(true); // shared + shared
      expect(lockFd(fd1, { exclusive: true, timeoutMs: 10 })).toBe(false); // upgrade blocked by fd2's share
      unlockFd(fd2);
      expect(lockFd(fd1, { exclusive: true, timeoutMs: 10 })).toBe(true);
    } finally {
      closeSync(fd1);
      closeSync(fd2);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad descriptor is a SysError', () => {
    expect(sysError(() => lockFd(987654, { exclusive: true, timeoutMs: 0 }))).toMatchObject({ code: 'EBADF', op: 'flock LOCK_EX' });
  });
});
