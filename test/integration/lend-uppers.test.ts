// Links stacked on a lent NIC and the bridge it is a port of, on real namespaces with veth stand-ins: what the
// borrower stacked on it is deleted at give-back (never what home stacked), a NIC in use at home is refused unless
// allowed, and a bridge port lent anyway is made a port of its bridge again.
import { beforeEach, describe, expect, it } from 'vitest';
import { findRecords, giveBack, lend } from '../helpers/engine';
import { ip, linkJson, type Scratch } from '../helpers/kernel';
import { nicState, standInNic, useLendScratch } from '../helpers/lend-fixture';

const lendScratch = useLendScratch();
let s: Scratch;
beforeEach(() => (s = lendScratch.scratch()));

const path = (ns: string) => `/var/run/netns/${ns}`;
const owner = { kind: 'attach', target: 'test:uppers' } as const;

/** A macvlan named `<prefix><suffix>` on `parent`, in `netns` (default: ours), deleted by cleanup. */
function macvlan(suffix: string, parent: string, netns?: string): string {
  const name = s.name(suffix);
  const nsArgs = netns ? ['-n', netns] : [];
  ip(...nsArgs, 'link', 'add', name, 'link', parent, 'type', 'macvlan', 'mode', 'bridge');
  s.onCleanup(() => ip(...nsArgs, 'link', 'del', name));
  return name;
}

function bridge(suffix: string): string {
  const name = s.name(suffix);
  ip('link', 'add', name, 'type', 'bridge');
  s.onCleanup(() => ip('link', 'del', name));
  return name;
}

describe('uppers of a lent NIC', () => {
  it("deletes a macvlan the borrower stacked on the NIC, before it goes home, and says so; home's own upper stays", async () => {
    const pod = s.netns('pod');
    const nic = standInNic(s, 'n0');
    const mine = macvlan('hm', nic.name);
    const { record } = lend({ nic: { name: nic.name }, target: { path: path(pod) }, owner, allowInUse: true });
    const theirs = macvlan('pm', nic.name, pod);

    const back = await giveBack(record.key);
    expect(back.outcome).toBe('returned');
    expect(back.warnings).toEqual([`deleted macvlan ${theirs}, stacked on it in the namespace it was lent to`]);
    expect(linkJson(theirs, pod)).toBeNull();
    expect(linkJson(mine)).toMatchObject({ link: nic.name });
    expect(nicState(nic.name)).toEqual(nic);
    expect(findRecords()).toHaveLength(0);
  });

  it('leaves alone, in the target, a macvlan on another link', async () => {
    const pod = s.netns('pod');
    const nic = standInNic(s, 'n1');
    const { record } = lend({ nic: { name: nic.name }, target: { path: path(pod) }, owner });
    const [other] = s.veth('o0', 'o1', pod);
    const beside = macvlan('om', other, pod);
    const back = await giveBack(record.key);
    expect(back.warnings).toEqual([]);
    expect(linkJson(beside, pod)).toMatchObject({ link: other });
  });
});

describe('a NIC in use at home', () => {
  it('refuses a NIC a macvlan at home is stacked on, naming it, and changes nothing', () => {
    const pod = s.netns('pod');
    const nic = standInNic(s, 'n2');
    const upper = macvlan('hm', nic.name);
    expect(() => lend({ nic: { name: nic.name }, target: { path: path(pod) }, owner })).toThrow(
      `device ${nic.name} is in use at home: macvlan ${upper} is stacked on it: it keeps using it while it is lent`,
    );
    expect(nicState(nic.name)).toEqual(nic);
    expect(findRecords()).toHaveLength(0);
  });

  it('refuses a bridge port, naming the bridge; lent with allowInUse, it is made a port of the bridge again', async () => {
    const pod = s.netns('pod');
    const nic = standInNic(s, 'n3');
    const br = bridge('br');
    ip('link', 'set', nic.name, 'master', br);
    expect(() => lend({ nic: { name: nic.name }, target: { path: path(pod) }, owner })).toThrow(
      `device ${nic.name} is in use at home: it is a port of bridge ${br}: lending it takes it out (it is put back on give-back)`,
    );
    expect(linkJson(nic.name)).toMatchObject({ master: br });

    const { record } = lend({ nic: { name: nic.name }, target: { path: path(pod) }, owner, allowInUse: true });
    expect(record.snapshot.master).toEqual({ name: br, index: linkJson(br).ifindex });
    const back = await giveBack(record.key);
    expect(back.warnings).toEqual([]);
    expect(linkJson(nic.name)).toMatchObject({ master: br });
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('names a bridge that is gone by the give-back, and brings the NIC home all the same', async () => {
    const pod = s.netns('pod');
    const nic = standInNic(s, 'n4');
    const br = s.name('bx');
    ip('link', 'add', br, 'type', 'bridge');
    ip('link', 'set', nic.name, 'master', br);
    const { record } = lend({ nic: { name: nic.name }, target: { path: path(pod) }, owner, allowInUse: true });
    ip('link', 'del', br);
    const back = await giveBack(record.key);
    expect(back.outcome).toBe('returned');
    expect(back.warnings).toEqual([`its master ${br} is gone; not made a port again`]);
    expect(nicState(nic.name)).toEqual(nic);
    expect(linkJson(nic.name).master).toBeUndefined();
  });
});
