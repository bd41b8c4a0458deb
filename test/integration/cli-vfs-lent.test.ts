// A VF count change removes every VF of the PF: `sriovctl vfs` (and `attach --vfs`) refuse it at once, naming each
// lend in the way and how to give it back, while a VF of the PF or the PF itself is lent — from the host, and
// from inside a node (a named namespace playing it, sharing the host's state dir and sysfs tree), where the PF lent
// to that very node is the node's to change. Real processes, real namespaces; sysfs is the simulated tree.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { findRecords, lend } from '../helpers/engine';
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';

const PF = '0000:7a:00.0';

describe('a VF count change while the PF or its VFs are lent', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  const numvfs = () => w.sysfs.sim.read(`${w.sysfs.sim.pciDir(PF)}/sriov_numvfs`)?.trim();
  const numvfsWrites = () => w.sysfs.driver.events.filter((e) => e.kind === 'numvfs' || e.kind === 'numvfs-refused');

  /** Every record file and its text: a refusal writes none of them. */
  function ledgerText(): Record<string, string> {
    const dir = join(w.env.stateDir, 'records');
    return Object.fromEntries(w.records().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
  }

  /** The refusal, its exit status (1: failed, nothing changed) and nothing written: count, ledger, driver. */
  async function expectRefused(run: Promise<{ code: number | null; stderr: string }>, parts: string[]): Promise<string> {
    const count = numvfs();
    const ledger = ledgerText();
    const writes = numvfsWrites().length;
    const r = await run;
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`VF count of ${PF} not changed, nothing written`);
    for (const part of parts) expect(lines[0]).toContain(part);
    expect(numvfs()).toBe(count);
    expect(ledgerText()).toEqual(ledger);
    expect(numvfsWrites()).toHaveLength(writes);
    return lines[0];
  }

  it('from the host: a VF lent to a node; the PF lent to a node', async () => {
    const { pf, vfs } = w.pfWithVfs('a', PF, 2);
    const node = w.netns('node');
    expect((await w.run('attach', vfs[1].bdf, node)).code).toBe(0);
    await expectRefused(w.run('vfs', pf.name, '4'), [`VF ${vfs[1].bdf} (${vfs[1].nic.name}) held by attach:${node} (sriovctl detach ${vfs[1].bdf})`]);
    // attach --vfs of the PF: refused before the PF moves
    const other = w.netns('other');
    await expectRefused(w.run('attach', pf.name, other, '--vfs', '4'), [`held by attach:${node}`]);
    expect(w.state(pf.name)).toEqual(pf);
    expect((await w.run('detach', vfs[1].bdf)).code).toBe(0);

    // the PF itself lent (no VF lent): the host may not change what the node holds
    expect((await w.run('attach', pf.name, node)).code).toBe(0);
    await expectRefused(w.run('vfs', PF, '0'), [`PF ${PF} (${pf.name}) held by attach:${node} (sriovctl detach ${PF})`]);
  });

  it("the engine's change as the PF's own lend (cluster up's path): refused while a VF is lent, the VF untouched", async () => {
    const { pf, vfs } = w.pfWithVfs('d', PF, 2);
    const node = w.netns('node');
    expect((await w.run('attach', vfs[0].bdf, node)).code).toBe(0);
    const owner = { kind: 'cluster', cluster: 'c', node: 'n' } as const;
    const { record } = lend({ nic: { name: pf.name }, target: { path: `/var/run/netns/${node}` }, owner });
    const session = openSession(loadConfig(process.env));
    try {
      await expectRefused(
        session.setLentVfCount({ key: record.key, owner, pf: PF, count: 4 }).then(
          () => ({ code: 0, stderr: '' }),
          (err: Error) => ({ code: 1, stderr: `${err.message}\n` }),
        ),
        [`VF ${vfs[0].bdf} (${vfs[0].nic.name}) held by attach:${node}`],
      );
    } finally {
      session.close();
    }
    expect(w.state(vfs[0].nic.name, node)).toMatchObject({ mac: vfs[0].nic.mac, mtu: vfs[0].nic.mtu });
  });

  it('from inside the node: the VFs lent to it, one lent on to a pod by its plugin', async () => {
    const { pf, vfs } = w.pfWithVfs('b', PF, 2);
    const node = w.netns('node');
    const pod = w.netns('pod');
    for (const nic of [vfs[0].bdf, vfs[1].bdf, pf.name]) expect((await w.run('attach', nic, node)).code).toBe(0);
    const add = w.nodePluginAdd(node, pod, vfs[0].bdf);
    expect(add.status, add.stderr + add.stdout).toBe(0);
    expect(findRecords().some((r) => r.key.includes('_in_'))).toBe(true);

    const line = await expectRefused(w.runIn(node, 'vfs', pf.name, '1'), [
      `VF ${vfs[0].bdf} (${vfs[0].nic.name}) held by attach:${node} (sriovctl detach ${vfs[0].bdf})`,
      `VF ${vfs[0].bdf} (${vfs[0].nic.name}) held by cni:ctr-${w.s.prefix}/net1 (delete the pod of container ctr-${w.s.prefix}, whose CNI DEL gives back net1)`,
      `VF ${vfs[1].bdf} (${vfs[1].nic.name}) held by attach:${node}`,
    ]);
    // the PF is the node's own: not in the way
    expect(line).not.toContain(`PF ${PF}`);
  });

  it('from inside the node, nothing else lent: the PF lent to it is the node\'s to change, and its count at home comes back', async () => {
    const { pf } = w.pfWithVfs('c', PF, 1);
    const node = w.netns('node');
    expect((await w.run('attach', pf.name, node)).code).toBe(0);
    const r = await w.runIn(node, 'vfs', pf.name, '3');
    expect(r.code, r.stderr).toBe(0);
    expect(numvfs()).toBe('3');
    // as the lend's own change: the count at home recorded first
    expect(findRecords().map((x) => x.vfCount)).toEqual([{ pf: PF, before: 1 }]);
    expect((await w.run('detach', pf.name)).code).toBe(0);
    expect(numvfs()).toBe('1');
    expect(w.state(pf.name)).toEqual(pf);
    expect(w.records()).toEqual([]);
  });
});
