// The root qdisc the owner set on a lent NIC, on real namespaces with a veth stand-in: a move destroys it, the
// give-back puts a classless one back with its parameters, and names what it does not put back (a classful root,
// clsact and its filters).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { giveBack, lend } from '../helpers/engine';
import { ip } from '../helpers/kernel';
import { standInNic, useLendScratch } from '../helpers/lend-fixture';

const { scratch } = useLendScratch();
const owner = { kind: 'attach', target: 'test:qdisc' } as const;

/** `tc -j qdisc show dev` as iproute2 reads it (an independent reader), without the counters that tick. */
function qdiscs(dev: string): unknown[] {
  const out = JSON.parse(execFileSync('tc', ['-j', 'qdisc', 'show', 'dev', dev], { encoding: 'utf8' })) as Record<string, unknown>[];
  return out.map(({ refcnt: _refcnt, ...q }) => q);
}

const tc = (...args: string[]) => execFileSync('tc', args, { encoding: 'utf8' });

describe('the root qdisc of a lent NIC', () => {
  it('puts a classless root qdisc back with its handle and parameters', async () => {
    const s = scratch();
    const pod = s.netns('pod');
    const nic = standInNic(s, 'qa');
    tc('qdisc', 'replace', 'dev', nic.name, 'root', 'handle', '7:', 'tbf', 'rate', '10mbit', 'burst', '32kbit', 'latency', '400ms');
    ip('link', 'set', nic.name, 'up');
    const before = qdiscs(nic.name);
    expect(before).toEqual([expect.objectContaining({ kind: 'tbf', handle: '7:', root: true })]);

    const { record } = lend({ nic: { name: nic.name }, target: { path: `/var/run/netns/${pod}` }, owner });
    expect(record.snapshot.qdisc).toMatchObject({ kind: 'tbf', handle: 0x70000 });
    const back = await giveBack(record.key);
    expect(back.warnings).toEqual([]);
    expect(qdiscs(nic.name)).toEqual(before);
  });

  it('leaves the default alone, and names a classful root and clsact as not restored', async () => {
    const s = scratch();
    const pod = s.netns('pod');
    const plain = standInNic(s, 'qb');
    const { record: r0 } = lend({ nic: { name: plain.name }, target: { path: `/var/run/netns/${pod}` }, owner });
    expect(r0.snapshot.qdisc).toBeNull();
    expect((await giveBack(r0.key)).warnings).toEqual([]);

    const nic = standInNic(s, 'qc');
    tc('qdisc', 'replace', 'dev', nic.name, 'root', 'handle', '1:', 'htb', 'default', '1');
    tc('qdisc', 'add', 'dev', nic.name, 'clsact');
    const { record } = lend({ nic: { name: nic.name }, target: { path: `/var/run/netns/${pod}` }, owner });
    const back = await giveBack(record.key);
    expect(back.warnings.sort()).toEqual(['clsact qdisc ffff: and its filters: not restored', 'root qdisc htb 1: (classful) and what hangs from it: not restored']);
  });
});
