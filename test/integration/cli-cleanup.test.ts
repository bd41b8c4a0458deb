// `sriovctl cleanup` — the CI hook — as a real process: it finishes crashed records, gives back every NIC the
// ledger holds, and returns SR-IOV NICs nobody recorded (found in any namespace on the machine) to the initial
// namespace, never touching a non-SR-IOV link.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ip, ipIn } from '../helpers/kernel';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import type { CleanupEntry } from '../../src/cli/cleanup';
import { lend } from '../helpers/engine';
import { withoutNeighbourWarnings } from '../helpers/cli-process';

const PF_A = '0000:af:00.0';
const PF_B = '0000:af:00.1';

describe('sriovctl cleanup', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  it('returns SR-IOV NICs nobody recorded, under their original names, and never a plain link', async () => {
    const a = w.pf('a', PF_A);
    const b = w.pf('b', PF_B);
    const node = w.netns('node');
    const nodeEth0 = w.plainNic('e', node); // a node's own interface: not SR-IOV
    const ctr = await w.container();
    // moved by hand, as kubevirtci's scripts do: no record; renamed inside the node
    ip('link', 'set', a.name, 'netns', node);
    ipIn(node, 'link', 'set', a.name, 'name', 'eth7');
    ip('link', 'set', b.name, 'netns', String(ctr.pid));

    const dry = await w.run('cleanup', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout.split('\n').filter(Boolean).sort()).toEqual(
      [
        `eth7 (${PF_A}) from /var/run/netns/${node}: would return to the initial namespace as ${a.name}`,
        `${b.name} (${PF_B}) from /proc/${ctr.pid}/ns/net: would return to the initial namespace`,
      ].sort(),
    );
    expect(w.state(a.name)).toBeNull();
    expect(w.state('eth7', node)).not.toBeNull();

    const r = await w.run('cleanup', '--json');
    expect(withoutNeighbourWarnings(r.stderr)).toBe('');
    expect(r.code).toBe(0);
    const entries = JSON.parse(r.stdout) as CleanupEntry[];
    expect(entries.map((e) => [e.nic, e.pciAddress, e.source, e.outcome, e.name]).sort()).toEqual(
      [
        ['eth7', PF_A, 'scan', 'returned', a.name],
        [b.name, PF_B, 'scan', 'returned', b.name],
      ].sort(),
    );
    expect(entries.find((e) => e.pciAddress === PF_A)).toEqual({
      nic: 'eth7',
      pciAddress: PF_A,
      source: 'scan',
      outcome: 'returned',
      name: a.name,
      owner: null,
      from: `/var/run/netns/${node}`,
      warnings: [],
      error: null,
    });
    expect(w.state(a.name)).toMatchObject({ mac: a.mac, mtu: a.mtu });
    expect(w.state(b.name)).toMatchObject({ mac: b.mac, mtu: b.mtu });
    expect(w.state(nodeEth0.name, node)).toEqual(nodeEth0);
    expect(w.records()).toEqual([]);

    const again = await w.run('cleanup');
    expect(again).toMatchObject({ code: 0, stdout: 'nothing to clean up\n' });
  });

  it('gives back every recorded NIC (attach and CNI alike) and finishes a crashed attach', async () => {
    const a = w.pf('a', PF_A);
    const b = w.pf('b', PF_B);
    const c = w.plainNic('c');
    const node = w.netns('node');
    const pod = w.netns('pod');
    expect((await w.run('attach', a.name, node)).code).toBe(0);
    lend({ nic: { name: b.name }, target: { path: `/var/run/netns/${pod}` }, owner: { kind: 'pod', containerId: 'ctr1', ifname: 'net1' }, name: 'net1' });
    const crashed = await w.runWith({ SRIOVCTL_FAILPOINT: 'lend:moved' }, 'attach', c.name, node);
    expect(crashed.code).toBeNull(); // SIGKILLed itself right after the move
    expect(w.state(c.name, node)).not.toBeNull();

    const r = await w.run('cleanup');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean).sort();
    expect(lines).toEqual(
      [
        `${a.name} (${PF_A}) [attach:${node}]: returned`,
        `${b.name} (${PF_B}) [cni:ctr1/net1]: returned`,
        `${c.name} [attach:${node}]: returned`,
      ].sort(),
    );
    for (const n of [a, b, c]) expect(w.state(n.name)).toEqual(n);
    expect(w.records()).toEqual([]);
  });

  it('reports a NIC whose namespace died (a virtual one is gone) and exits 0', async () => {
    const c = w.plainNic('c');
    const ctr = await w.container();
    expect((await w.run('attach', c.name, `pid:${ctr.pid}`)).code).toBe(0);
    ctr.kill();
    await new Promise((res) => setTimeout(res, 200));
    const r = await w.run('cleanup', '--json');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as CleanupEntry[]).map((e) => [e.nic, e.outcome])).toEqual([[c.name, 'gone']]);
    expect(w.records()).toEqual([]);
  });

  it('exits 3 when a NIC could not be restored as it was, or a record cannot be read', async () => {
    const a = w.pf('a', PF_A);
    const node = w.netns('node');
    expect((await w.run('attach', a.name, node)).code).toBe(0);
    ip('link', 'add', a.name, 'type', 'veth', 'peer', 'name', w.s.name('y')); // its name is taken at home
    w.s.onCleanup(() => ip('link', 'del', w.s.name('y')));
    fs.writeFileSync(path.join(w.env.stateDir, 'records', 'pci-0000_af_00_7.json'), '{ torn');

    const r = await w.run('cleanup', '--json');
    expect(r.code).toBe(3);
    const entries = JSON.parse(r.stdout) as CleanupEntry[];
    const renamed = entries.find((e) => e.pciAddress === PF_A)!;
    expect(renamed.outcome).toBe('returned-renamed');
    expect(renamed.warnings.join()).toMatch(/taken/);
    expect(w.state(renamed.name!)).toMatchObject({ mac: a.mac });
    w.s.onCleanup(() => ip('link', 'del', renamed.name!));
    const corrupt = entries.find((e) => e.nic.endsWith('pci-0000_af_00_7.json'))!;
    expect(corrupt).toMatchObject({ source: 'ledger', outcome: 'failed' });
    expect(corrupt.error).toMatch(/^unreadable record: /);
  });
});
