// `sriovctl nics` through the real executable: every PF and VF of the (simulated) sysfs tree with its driver, VF
// count, link state, the host's uplink (refused) and where each is lent; and `vfs` on a lent PF says where it is.
// The "host" is a named namespace of the test's (its own routes make its uplink); the NICs are real veth ends.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { ipIn } from '../helpers/kernel';

const PF = '0000:6c:00.0';
const UPLINK = '0000:6d:00.0';

describe('sriovctl nics', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  /** No nameserver: only the routes of the test's host namespace decide its uplink. */
  function noNameservers(): NodeJS.ProcessEnv {
    const conf = path.join(w.env.stateDir, 'resolv.conf');
    fs.writeFileSync(conf, '');
    return { SRIOVCTL_RESOLV_CONF: conf };
  }

  it('lists PFs and VFs, the uplink refused and a lent VF with where it is; --json the same as data', async () => {
    const host = w.netns('host');
    const { pf, vfs } = w.pfWithVfs('a', PF, 2, host);
    const up = w.pf('u', UPLINK, { netns: host, spec: { totalVfs: 4 } });
    ipIn(host, 'link', 'set', up.name, 'up');
    ipIn(host, 'addr', 'add', '10.71.0.2/24', 'dev', up.name);
    ipIn(host, 'route', 'add', 'default', 'via', '10.71.0.1', 'dev', up.name, 'onlink');
    const node = w.netns('node');
    const a = await w.runWithIn(host, noNameservers(), 'attach', vfs[1].bdf, node, '--as', 'net1');
    expect([a.code, a.stderr]).toEqual([0, '']);

    const r = await w.runWithIn(host, noNameservers(), 'nics');
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +ADDRESS +KIND +DRIVER +VFS +LINK +USE$/);
    expect(lines.slice(1).map((l) => l.split(/ {2,}/).map((c) => c.trim()).filter(Boolean))).toEqual([
      [pf.name, PF, 'PF', 'sim_pf', '2/8', 'down', 'home'],
      [vfs[0].nic.name, vfs[0].bdf, 'VF 0', 'iavf', '-', 'down', 'home'],
      ['lent', vfs[1].bdf, 'VF 1', 'iavf', '-', '-', expect.stringMatching(new RegExp(`^lent to /var/run/netns/${node} as net1 by attach:${node} for \\d+s$`))],
      [up.name, UPLINK, 'PF', 'sim_pf', '0/4', expect.any(String), 'uplink, not lent (default via 10.71.0.1 in table main)'],
    ]);

    const j = await w.runWithIn(host, noNameservers(), 'nics', '--json');
    expect([j.code, j.stderr]).toEqual([0, '']);
    const list = JSON.parse(j.stdout);
    expect(list.map((n: { address: string }) => n.address)).toEqual([PF, vfs[0].bdf, vfs[1].bdf, UPLINK]);
    expect(list[0]).toMatchObject({ kind: 'pf', name: pf.name, numVfs: 2, totalVfs: 8, pf: null, uplink: null, lent: null });
    expect(list[2]).toMatchObject({ kind: 'vf', name: null, pf: PF, vfIndex: 1, link: null });
    expect(list[2].lent).toMatchObject({ owner: `attach:${node}`, phase: 'lent', target: { namespace: `/var/run/netns/${node}`, name: 'net1' } });
    expect(list[2].lent.since).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(list[3].uplink).toBe('default via 10.71.0.1 in table main');

    // the uplink is what attach refuses: the same words
    const refused = await w.runWithIn(host, noNameservers(), 'attach', up.name, node);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('default via 10.71.0.1 in table main');
    expect((await w.runIn(host, 'detach', vfs[1].bdf)).code).toBe(0);
  });

  it('no SR-IOV PF: one line, exit 0; a state dir that cannot exist is an error', async () => {
    const r = await w.run('nics');
    expect(r).toEqual({ code: 0, stdout: 'no SR-IOV PF on this host\n', stderr: '' });
    const bad = await w.run('--state-dir', '/proc/nope', 'nics');
    expect([bad.code, bad.stdout]).toEqual([1, '']);
    expect(bad.stderr.split('\n')[0]).toMatch(/^sriovctl: nics: /);
  });

  it('vfs on a PF lent away (no netdev here) says where it is lent, with its VFs', async () => {
    const { pf } = w.pfWithVfs('b', PF, 1);
    const node = w.netns('node');
    expect((await w.run('attach', pf.name, node)).code).toBe(0);
    // as the kernel does: sysfs here no longer shows the netdev of a PF in another namespace
    w.sysfs.sim.removeNetdev(pf.name);
    const r = await w.run('vfs', pf.name);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^${pf.name} \\(${PF}\\): 1 of 8 VFs; lent to /var/run/netns/${node} as ${pf.name} by attach:${node} for \\d+s$`));
    // nics: the PF's row says "lent" for its name, and where it is
    const listed = await w.run('nics');
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    const row = listed.stdout.split('\n').find((l) => l.includes(PF))!;
    expect(row.split(/ {2,}/).map((c) => c.trim())).toEqual(['lent', PF, 'PF', 'sim_pf', '1/8', '-', expect.stringMatching(new RegExp(`^lent to /var/run/netns/${node} as ${pf.name} by attach:${node} for \\d+s$`))]);
    // named by its PCI address: that address once
    const byPci = await w.run('vfs', PF);
    expect([byPci.code, byPci.stderr]).toEqual([0, '']);
    expect(byPci.stdout.split('\n')[0]).toMatch(new RegExp(`^${PF}: 1 of 8 VFs; lent to /var/run/netns/${node} as ${pf.name} by attach:${node} for \\d+s$`));
    expect((await w.run('detach', pf.name)).code).toBe(0);
  });
});
