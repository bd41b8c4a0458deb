// `sriovctl cluster up/down/status` on the local provider: nodes are real network namespaces, NICs are veth
// stand-ins known to a simulated sysfs tree (the lab's own, or a test's), VFs come from the tree's drivers.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { simNicPlan, simPfLinkGroup } from '../../src/cluster/lab/sim-lab';
import { loadConfig } from '../../src/config';
import { clusterDir, readClusterState } from '../../src/cluster/orchestration/state';
import type { ClusterStatus } from '../../src/cluster/orchestration/status';
import type { DownSummary } from '../../src/cluster/orchestration/down';
import { findRecords } from '../helpers/engine';
import { simMac } from '../../src/sriov/sim';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';
import { holdVfioGroup, uniqueIommuGroups } from '../helpers/vfio-holder';
import { deleteLinkAnywhere, ip, ipIn, Scratch } from '../helpers/kernel';
import { isolatedRoots, nicState } from '../helpers/lend-fixture';
import { namespacesWith, sriovctl, standInPfs } from './cluster-fixture';
import { assertBuilt, sriovctl as sriovctlProcess } from '../helpers/cli-process';
import { playHost } from '../helpers/play-host';
import { sharedHostL3 } from '../helpers/l3-world';
import { captureNic, diffCaptures } from '../helpers/state-diff';

let s: Scratch;
let roots: ReturnType<typeof isolatedRoots>;
let sys: FakeSysfs | null;
let name: string;

beforeEach(() => {
  s = new Scratch();
  roots = isolatedRoots();
  sys = null;
  name = `cl${randomBytes(2).toString('hex')}`;
});

afterEach(async () => {
  try {
    if (existsSync(clusterDir(stateDirOfTest(), name)) || findRecords().length) await sriovctl('cluster', 'down', '--name', name, '-q');
  } finally {
    for (const ns of namespacesWith(`${name}-`)) ip('netns', 'del', ns);
    for (const nic of simNicPlan(name, 4)) for (const l of [nic.name, nic.peer]) deleteLinkAnywhere(l);
    sys?.remove();
    s.cleanup();
    roots.cleanup();
  }
});

/** Link names (but lo) in a named namespace. */
function linksIn(ns: string): string[] {
  return (JSON.parse(ip('-n', ns, '-j', 'link', 'show')) as { ifname: string }[]).map((l) => l.ifname).filter((n) => n !== 'lo');
}

async function status(): Promise<ClusterStatus> {
  const r = await sriovctl('cluster', 'status', '--name', name, '--json');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as ClusterStatus;
}

/** A PF's VF count as its sysfs file says (the kernel prints it with a newline, a plain write may not). */
function numVfs(bdf: string): number {
  return Number(sys!.sim.read(`${sys!.sim.pciDir(bdf)}/sriov_numvfs`)!.trim());
}

describe('local provider, simulated NICs', () => {
  it('up: nodes, one PF per agent with its VFs inside, manifests; down: every NIC back, nothing left', async () => {
    const manifests = join(roots.stateDir, 'out');
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '2', '--vfs', '3', '--manifests', manifests);
    expect(up.stderr).not.toMatch(/warning|sriovctl: /);
    expect(up.code).toBe(0);
    // one progress line per step, each with its elapsed time
    expect(up.stderr).toMatch(/^\[\s*\d+\.\d\ds\] preflight: no SR-IOV PF here, simulating 2 NICs/m);
    expect(up.stderr).toMatch(new RegExp(`^\\[\\s*\\d+\\.\\d\\ds\\] cluster ${name} is up$`, 'm'));
    expect(up.stdout).toMatch(new RegExp(`${name}-agent-0\\s+agent\\s+\\S+ \\(\\S+\\) as \\S+\\s+3/3\\s+ready`));

    expect(namespacesWith(`${name}-`).sort()).toEqual([`${name}-agent-0`, `${name}-agent-1`, `${name}-server-0`]);
    const sims = simNicPlan(name, 2);
    for (const [i, nic] of sims.entries()) {
      const node = `${name}-agent-${i}`;
      expect(nicState(nic.name)).toBeNull();
      expect(nicState(nic.name, node)).toMatchObject({ mac: nic.mac, up: true });
      // the VF netdevs are in the node: veth stand-ins named and addressed as the tree says
      const vfs = linksIn(node).filter((l) => /v\d$/.test(l)).sort();
      expect(vfs).toEqual([0, 1, 2].map((v) => `${nic.name}v${v}`));
      const vf0 = nicState(`${nic.name}v0`, node)!;
      const vfAddresses = [0, 1, 2].map((v) => `${nic.pciAddress.slice(0, 8)}02.${v}`); // VF n at the PF's routing ID + 16 + n
      expect(vf0.mac).toBe(simMac(vfAddresses[0]));
      // ... lent there, not born there: born in the initial namespace (as a kernel VF driver registers them), each
      // has a record of its own, owned by the node like its PF, with the initial namespace as its home
      const records = findRecords({ owner: { kind: 'cluster', cluster: name, node } });
      expect(records.map((r) => r.identity.pciAddress)).toEqual([nic.pciAddress, ...vfAddresses]);
      for (const [v, r] of records.slice(1).entries()) {
        expect([r.key === `pci-${r.identity.pciAddress!.replace(/[:.]/g, '_')}`, r.phase, r.snapshot.name, r.targetName, r.home.initial]).toEqual([true, 'lent', `${nic.name}v${v}`, `${nic.name}v${v}`, true]);
        expect(r.target.path).toBe(`/var/run/netns/${node}`);
      }
      for (const v of vfs) expect(nicState(v)).toBeNull();
    }
    expect(linksIn(`${name}-server-0`)).toEqual([]);

    const st = await status();
    expect(st).toMatchObject({ cluster: name, known: true, provider: 'local', phase: 'up', simulated: true, manifestsDir: manifests });
    expect(st.nodes.map((n) => [n.name, n.role, n.present, n.vfs?.ready ?? null])).toEqual([
      [`${name}-server-0`, 'server', true, null],
      [`${name}-agent-0`, 'agent', true, 3],
      [`${name}-agent-1`, 'agent', true, 3],
    ]);
    expect(st.nodes[1].labels).toEqual({ 'node-role.kubernetes.io/worker': '', sriov_capable: 'true' });
    expect(st.nics.map((n) => [n.name, n.node, n.phase])).toEqual(
      sims.flatMap((n, i) => [n.name, ...[0, 1, 2].map((v) => `${n.name}v${v}`)].map((nic) => [nic, `${name}-agent-${i}`, 'lent'])),
    );

    // the device plugin selects the VFs of every attached PF
    expect(readdirSync(manifests).sort()).toEqual([
      '10-multus.yaml',
      '20-sriov-device-plugin.yaml',
      '30-sriovctl-cni-installer.yaml',
      '40-network-attachment.yaml',
    ]);
    const dp = parseAllDocuments(readFileSync(join(manifests, '20-sriov-device-plugin.yaml'), 'utf8')) as any[];
    const config = JSON.parse(dp.map((d) => d.toJS()).find((o) => o.kind === 'ConfigMap').data['config.json']);
    expect(config.resourceList[0].selectors).toEqual({ pfNames: sims.map((n) => n.name) });

    const tree = readClusterState(stateDirOfTest(), name)!.sim!.sysfsRoot;
    expect(existsSync(join(tree, 'bus', 'pci', 'devices', sims[0].pciAddress))).toBe(true);
    const down = await sriovctl('cluster', 'down', '--name', name, '--json');
    expect(down.code).toBe(0);
    const summary = JSON.parse(down.stdout) as DownSummary;
    expect(summary.ok).toBe(true);
    expect(summary.clusterDeleted).toBe(true);
    // the VF netdevs first (home under the names they were born with), then the PFs; then the VF counts
    expect(summary.nics.map((n) => [n.name, n.outcome, n.homeName, n.node])).toEqual([
      ...sims.flatMap((n, i) => [0, 1, 2].map((v) => [`${n.name}v${v}`, 'returned', `${n.name}v${v}`, `${name}-agent-${i}`])),
      ...sims.map((n, i) => [n.name, 'returned', n.name, `${name}-agent-${i}`]),
    ]);
    for (const n of summary.nics) expect(n.homeAfterMs).toBeGreaterThan(0);

    expect(namespacesWith(`${name}-`)).toEqual([]);
    for (const nic of sims) for (const l of [nic.name, nic.peer]) expect(nicState(l)).toBeNull();
    expect(findRecords()).toEqual([]);
    expect(existsSync(clusterDir(stateDirOfTest(), name))).toBe(false);
    expect(existsSync(tree)).toBe(false);
    const gone = await sriovctl('cluster', 'status', '--name', name);
    expect([gone.code, gone.stdout]).toEqual([1, '']);
    expect(gone.stderr).toBe(`sriovctl: cluster status ${name}: cluster ${name} is not known to state dir ${stateDirOfTest()} (it knows none)\n`);
  });

  it('down after a node namespace was deleted behind our back: the others come back, the lost one is reported, exit 3', async () => {
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '2', '--vfs', '1', '-q');
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    ip('netns', 'del', `${name}-agent-0`);

    const down = await sriovctl('cluster', 'down', '--name', name);
    expect(down.code).toBe(3);
    const [lost, kept] = simNicPlan(name, 2);
    // a veth stand-in dies with its namespace (a physical PF would be found in the initial namespace instead)
    expect(down.stderr).toContain(`${lost.name} (${lost.pciAddress}): gone from ${name}-agent-0`);
    expect(down.stdout).toContain(`${kept.name} (${kept.pciAddress}): returned as ${kept.name} from ${name}-agent-1`);
    expect(down.stdout).toContain(`cluster ${name}: deleted`);
    expect(namespacesWith(`${name}-`)).toEqual([]);
    expect(nicState(kept.name)).toBeNull(); // the lab removed its stand-ins after giving them back
    expect(findRecords()).toEqual([]);
    expect(existsSync(clusterDir(stateDirOfTest(), name))).toBe(false);
  });

  it('a VF netdev whose home name was taken meanwhile comes home under a fallback name, and goes with its VF: exit 0', async () => {
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '1', '--vfs', '2', '-q');
    expect(up.code).toBe(0);
    const [pf] = simNicPlan(name, 1);
    // what igbvf's ethN naming does on a real kernel: another VF netdev born later took the first one's home name
    const [squatter] = s.veth(`${pf.name.slice(-4)}q`, `${pf.name.slice(-4)}r`);
    ip('link', 'set', squatter, 'name', `${pf.name}v0`);
    try {
      const down = await sriovctl('cluster', 'down', '--name', name, '--json');
      const nics = (JSON.parse(down.stdout) as DownSummary).nics;
      const vf0 = nics.find((n) => n.name === `${pf.name}v0`)!;
      expect([vf0.outcome, vf0.homeName === `${pf.name}v0`, vf0.removedWithVfs, vf0.warnings]).toEqual(['returned', false, true, []]);
      expect(nics.find((n) => n.name === `${pf.name}v1`)).toMatchObject({ outcome: 'returned', homeName: `${pf.name}v1`, removedWithVfs: true });
      expect(down.code).toBe(0);
      // the fallback-named VF netdev went with its VF; the squatter is untouched
      expect(nicState(vf0.homeName!)).toBeNull();
      expect(nicState(`${pf.name}v0`)).not.toBeNull();
    } finally {
      deleteLinkAnywhere(`${pf.name}v0`);
    }
  });

  it('down deletes the PF stand-ins in one request, and never a foreign link that joined their group', async () => {
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '2', '--vfs', '1');
    expect(up.code).toBe(0);
    const plan = simNicPlan(name, 2);
    const group = simPfLinkGroup(plan);
    // back home after down's give-back, still in their group: a clean down deletes them in one request
    const down = await sriovctl('cluster', 'down', '--name', name, '-v');
    expect(down.code).toBe(0);
    expect(down.stderr).toContain(`sim: delete ${plan[0].name}, ${plan[1].name} (link group ${group})`);
    for (const nic of plan) expect(nicState(nic.name)).toBeNull();

    // again, with somebody else's link in that group: it survives, ours are deleted one by one
    expect((await sriovctl('cluster', 'up', '--name', name, '--agents', '2', '--vfs', '1')).code).toBe(0);
    const [foreign] = s.veth('fg', 'fh');
    ip('link', 'set', foreign, 'group', String(group));
    const again = await sriovctl('cluster', 'down', '--name', name, '-v');
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('(link group');
    expect(again.stderr).toContain(`sim: delete ${plan[0].name}`);
    for (const nic of plan) expect(nicState(nic.name)).toBeNull();
    expect(nicState(foreign)).not.toBeNull();
  });

  it('vfs inside a node, its VFs lent to it: refused at once naming the cluster and its down, nothing changed', async () => {
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '1', '--vfs', '2', '-q');
    expect(up.code, up.stderr).toBe(0);
    const [pf] = simNicPlan(name, 1);
    const node = `${name}-agent-0`;
    const tree = readClusterState(stateDirOfTest(), name)!.sim!.sysfsRoot;
    const numvfsFile = join(tree, 'bus', 'pci', 'devices', pf.pciAddress, 'sriov_numvfs');
    const records = () => findRecords().map((r) => JSON.stringify(r));
    const before = { numvfs: readFileSync(numvfsFile, 'utf8'), records: records() };
    // the node's own sriovctl: its namespace, the host's state dir and the lab's tree (as the node's plugin sees them)
    const r = await sriovctlProcess({ stateDir: stateDirOfTest(), sysfsRoot: tree }, ['vfs', pf.name, '1'], { netns: node });
    expect(r.code, r.stderr).toBe(1);
    for (const v of [0, 1]) {
      expect(r.stderr).toContain(`VF ${pf.pciAddress.slice(0, 8)}02.${v} (${pf.name}v${v}) held by cluster:${name}/${node} (sriovctl cluster down --name ${name})`);
    }
    expect(r.stderr).not.toContain(`PF ${pf.pciAddress}`);
    expect({ numvfs: readFileSync(numvfsFile, 'utf8'), records: records() }).toEqual(before);
    expect((await status()).nodes.map((n) => n.vfs?.ready ?? null)).toEqual([null, 2]);
  });

  it('-v shows each kernel action; a second down is a no-op', async () => {
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '1', '--vfs', '1', '-v');
    expect(up.code).toBe(0);
    expect(up.stderr).toContain(`netns add ${name}-server-0`);
    expect(up.stderr).toMatch(/lend PF \S+ \(\S+\) to /);
    expect(up.stderr).toMatch(/ {2}moved \S+ to \S+ as \S+\n/);
    expect(up.stderr).not.toMatch(/lend:/);
    expect(up.stderr).toMatch(/sriov_numvfs of \S+: 0 -> 1/);
    const down = await sriovctl('cluster', 'down', '--name', name, '-v');
    expect(down.code).toBe(0);
    // every NIC home (the VF netdev, then its PF) before the VF count goes back
    const steps = down.stderr.split('\n').map((l) => l.trim());
    const pf = simNicPlan(name, 1)[0];
    const order = [
      `give back ${pf.name}v0 (${pf.pciAddress.slice(0, 8)}02.0) from ${name}-agent-0`,
      `moved ${pf.name}v0 from `,
      `give back ${pf.name} (${pf.pciAddress}) from ${name}-agent-0`,
      `moved ${pf.name} from `,
      `kept ${join(stateDirOfTest(), 'records', 'pci-')}`,
      `sriov_numvfs of ${pf.pciAddress}: back to 0`,
      // the PF's record, kept for its VF count, goes with it
      `removed ${join(stateDirOfTest(), 'records', `pci-${pf.pciAddress.replace(/[:.]/g, '_')}.json`)}`,
    ].map((p) => steps.findIndex((l) => l.startsWith(p)));
    expect(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])), down.stderr).toBe(true);
    // each NIC as status names it, never by the ledger's record key
    expect(down.stderr).not.toMatch(/give back .*\((pci|mac)-/);
    // done already: safe to repeat (exit 0), but not reported as a cluster deleted
    const again = await sriovctl('cluster', 'down', '--name', name);
    expect([again.code, again.stderr.includes('sriovctl:')]).toEqual([0, false]);
    expect(again.stdout).toMatch(new RegExp(`^cluster ${name}: not known to state dir ${stateDirOfTest()} \\(it knows none\\); no NIC given back \\(\\d+ ms\\)\n$`));
  });
});

describe('cluster list, and down/status without --name', () => {
  it('lists every cluster; without --name acts on the only one, and refuses, listing them, when there are several or none', async () => {
    assertBuilt();
    // the real executable, on this test's state dir and sysfs root
    const cli = (...args: string[]) => sriovctlProcess({ stateDir: stateDirOfTest(), sysfsRoot: loadConfig(process.env).sysfsRoot }, args);
    const other = `${name}b`;
    try {
      for (const n of [name, other]) expect((await cli('cluster', 'up', '--name', n, '--agents', '1', '--vfs', '1', '-q')).code).toBe(0);
      const listed = await cli('cluster', 'list', '--json');
      expect([listed.code, listed.stderr]).toEqual([0, '']);
      expect(JSON.parse(listed.stdout)).toEqual(
        [name, other].map((n) => ({ name: n, provider: 'local', phase: 'up', nodes: 2, nicsLent: 2, since: readClusterState(stateDirOfTest(), n)!.createdAt })),
      );
      const table = await cli('cluster', 'list');
      expect(table.stdout.split('\n')[0]).toMatch(/^NAME +PROVIDER +NODES +NICS LENT +AGE +PHASE$/);
      expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`^${name} +local +2 +2 +\\d+s +up$`));

      // a script that forgets --name deletes nothing
      for (const verb of ['down', 'status']) {
        const r = await cli('cluster', verb);
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(`sriovctl: cluster ${verb}: 2 clusters are known (${name}, ${other}): give --name\n`);
      }
      expect(JSON.parse((await cli('cluster', 'list', '--json')).stdout).map((c: { name: string }) => c.name)).toEqual([name, other]);

      // a mistyped --name is not reported as a cluster deleted, nor as an empty status: the known ones are named
      const typo = `${name}x`;
      const downTypo = await cli('cluster', 'down', '--name', typo);
      expect([downTypo.code, downTypo.stderr.includes('sriovctl:')]).toEqual([0, false]);
      expect(downTypo.stdout).toMatch(new RegExp(`^cluster ${typo}: not known to state dir ${stateDirOfTest()} \\(it knows: ${name}, ${other}\\); no NIC given back \\(\\d+ ms\\)\n$`));
      const statusTypo = await cli('cluster', 'status', '--name', typo);
      expect([statusTypo.code, statusTypo.stdout]).toEqual([1, '']);
      expect(statusTypo.stderr).toBe(`sriovctl: cluster status ${typo}: cluster ${typo} is not known to state dir ${stateDirOfTest()} (it knows: ${name}, ${other})\n`);
      expect(JSON.parse((await cli('cluster', 'list', '--json')).stdout).map((c: { name: string; nicsLent: number }) => [c.name, c.nicsLent])).toEqual([[name, 2], [other, 2]]);

      // one left: that one
      expect((await cli('cluster', 'down', '--name', other, '-q')).code).toBe(0);
      const st = await cli('cluster', 'status');
      expect([st.code, st.stdout.split('\n')[0]]).toEqual([0, `cluster ${name}: local, up, simulated NICs`]);
      // each NIC with its age, as status shows it (the timestamp is in --json)
      expect(st.stdout).toMatch(new RegExp(`\\n${simNicPlan(name, 1)[0].name} \\(\\S+\\): lent to ${name}-agent-0 as \\S+ for \\d+(s|m\\d*s?)\\n`));
      const down = await cli('cluster', 'down');
      expect(down.code, down.stderr).toBe(0);
      expect(down.stdout.trimEnd().split('\n').pop()).toMatch(new RegExp(`^cluster ${name}: deleted \\(\\d+ ms\\)$`));
      expect(findRecords()).toEqual([]);

      // none: nothing to act on
      const none = await cli('cluster', 'down');
      expect([none.code, none.stdout]).toEqual([1, '']);
      expect(none.stderr).toBe(`sriovctl: cluster down: no cluster is known to state dir ${stateDirOfTest()} (give --name)\n`);
      expect(await cli('cluster', 'list')).toMatchObject({ code: 0, stdout: 'no cluster\n', stderr: '' });
    } finally {
      if (existsSync(clusterDir(stateDirOfTest(), other))) await sriovctl('cluster', 'down', '--name', other, '-q');
      for (const ns of namespacesWith(`${other}-`)) ip('netns', 'del', ns);
      for (const nic of simNicPlan(other, 4)) for (const l of [nic.name, nic.peer]) deleteLinkAnywhere(l);
    }
  });
});

describe('cluster down in words', () => {
  it("a PF somebody already moved home is said as 'already home', not the give-back's outcome code (that stays in --json)", async () => {
    assertBuilt();
    const cli = (...args: string[]) => sriovctlProcess({ stateDir: stateDirOfTest(), sysfsRoot: loadConfig(process.env).sysfsRoot }, args);
    expect((await cli('cluster', 'up', '--name', name, '--agents', '1', '--vfs', '0', '-q')).code).toBe(0);
    const [pf] = simNicPlan(name, 1);
    // what a hand-run teardown does: the PF back into the host's namespace, under its own name
    ipIn(`${name}-agent-0`, 'link', 'set', pf.name, 'netns', '1');
    const down = await cli('cluster', 'down', '--name', name);
    expect(down.code, down.stderr).toBe(0);
    const lines = down.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${pf.name} \\(${pf.pciAddress}\\): already home as ${pf.name} from ${name}-agent-0 in \\d+ ms$`));
    expect(lines.at(-1)).toMatch(new RegExp(`^cluster ${name}: deleted \\(\\d+ ms\\)$`));
    expect(down.stdout + down.stderr).not.toMatch(/already-home|not-lent|returned-renamed/);
  });
});

describe('local provider on SR-IOV PFs of the sysfs tree', () => {
  /** Three veth stand-ins the test's tree knows as PFs; `pf1` is a prefix of `pf10`'s name. */
  function pfs() {
    sys = fakeSysfs();
    sys.sim.addDriver('vfio-pci');
    uniqueIommuGroups(sys.sim);
    const made = standInPfs(
      s,
      sys.sim,
      [
        { suffix: 'pf1', bdf: '0000:3b:00.0' },
        { suffix: 'pf10', bdf: '0000:3b:00.1' },
        { suffix: 'pf2', bdf: '0000:3c:00.0' },
      ],
      { macPrefix: '02:5b:00:00', totalVfs: 8, mtu: 1450 },
    );
    sys.driver.start(2);
    return made;
  }

  it('--exclude is an exact match; VFs bound to --driver; down restores PFs and VF counts', async () => {
    const [a, b, c] = pfs();
    const up = await sriovctl(
      'cluster', 'up', '--name', name, '--agents', '2', '--vfs', '2', '--driver', 'vfio-pci', '--exclude', a.name, '--no-simulate', '--vf-timeout', '10',
    );
    expect(up.stderr).not.toContain('warning');
    expect(up.code).toBe(0);
    expect(nicState(a.name)).toEqual(a.before);
    expect(nicState(b.name, `${name}-agent-0`)).toMatchObject({ mac: b.before.mac, mtu: 1450 });
    expect(nicState(c.name, `${name}-agent-1`)).toMatchObject({ mac: c.before.mac, mtu: 1450 });
    for (const pf of [b, c]) {
      expect(numVfs(pf.bdf)).toBe(2);
      for (const vf of sys!.sim.vfAddresses(pf.bdf)) expect(sys!.sim.readLinkName(`${sys!.sim.pciDir(vf)}/driver`)).toBe('vfio-pci');
    }
    const records = findRecords({ owner: { kind: 'cluster', cluster: name } });
    // each record says where its PF went and the VF count to put back, whoever gives it back
    expect(records.map((r) => ({ target: r.target.path, vfs: r.vfCount }))).toEqual([
      { target: `/var/run/netns/${name}-agent-0`, vfs: { pf: b.bdf, before: 0 } },
      { target: `/var/run/netns/${name}-agent-1`, vfs: { pf: c.bdf, before: 0 } },
    ]);

    const down = await sriovctl('cluster', 'down', '--name', name, '-q');
    expect(down.stderr).toBe('');
    expect(down.code).toBe(0);
    for (const pf of [a, b, c]) expect(nicState(pf.name)).toEqual(pf.before);
    for (const pf of [b, c]) expect(numVfs(pf.bdf)).toBe(0);
    expect(findRecords()).toEqual([]);
  });

  it('down brings a PF home with its L3 state: zero differences in the state diff', async () => {
    const [a] = pfs();
    sharedHostL3(s, a.name, s.name('w0'));
    const before = await captureNic(null, a.name, { shared: true });
    expect([before.rules, Object.keys(before.addresses).length]).toEqual([[expect.objectContaining({ iif: a.name })], 4]);
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '1', '--vfs', '1', '--pf', a.name, '--no-simulate', '--vf-timeout', '10');
    expect(up.code, up.stderr).toBe(0);
    expect(nicState(a.name)).toBeNull();
    const down = await sriovctl('cluster', 'down', '--name', name, '-q');
    expect(down).toMatchObject({ code: 0, stderr: '' });
    expect(diffCaptures(before, await captureNic(null, a.name, { shared: true }))).toEqual([]);
    expect(findRecords()).toEqual([]);
  });

  it('down with a VF held through VFIO: every PF home, the held one keeps its count and record (bounded by --vfio-wait); cleanup finishes', async () => {
    const [a, b, c] = pfs();
    const up = await sriovctl('cluster', 'up', '--name', name, '--agents', '2', '--vfs', '2', '--driver', 'vfio-pci', '--exclude', a.name, '--no-simulate', '--vf-timeout', '10');
    expect(up.code, up.stderr).toBe(0);
    const [vf0] = sys!.sim.vfAddresses(b.bdf);
    const holder = await holdVfioGroup(sys!.sim.readLinkName(`${sys!.sim.pciDir(vf0)}/iommu_group`)!);
    s.onCleanup(() => void holder.release());

    const down = await sriovctl('cluster', 'down', '--name', name, '-q', '--vfio-wait', '0.2');
    expect(down.code, down.stderr).toBe(3);
    const lines = down.stderr.split('\n').filter(Boolean);
    expect(lines, down.stderr).toHaveLength(1);
    for (const part of [`${b.name} (${b.bdf})`, `VF count of ${b.bdf} not restored to 0`, 'record kept', `pid ${holder.pid} (sleep)`, holder.device, 'waited 0.2 s']) {
      expect(lines[0]).toContain(part);
    }
    for (const pf of [a, b, c]) expect(nicState(pf.name)).toEqual(pf.before);
    expect([numVfs(b.bdf), numVfs(c.bdf)]).toEqual([2, 0]);
    expect(findRecords().map((r) => [r.identity.pciAddress, r.phase, r.vfCount])).toEqual([[b.bdf, 'returning', { pf: b.bdf, before: 0 }]]);

    await holder.release();
    const clean = await sriovctl('cleanup');
    expect(clean.code, clean.stderr).toBe(0);
    expect(numVfs(b.bdf)).toBe(0);
    expect(nicState(b.name)).toEqual(b.before);
    expect(findRecords()).toEqual([]);
  });

  it('preflight lists everything missing at once and changes nothing', async () => {
    const [a, b, c] = pfs();
    // a node of that name made by someone else (afterEach removes it)
    ip('netns', 'add', `${name}-server-0`);
    // and VFs asked on vfio-pci, whose driver the tree does not have
    rmSync(sys!.sim.p('bus/pci/drivers/vfio-pci'), { recursive: true });
    const r = await sriovctl('cluster', 'up', '--name', name, '--agents', '3', '--exclude', b.name, '--no-simulate', '--vfs', '9', '--driver', 'vfio-pci');
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe(`sriovctl: cluster up ${name}: preflight failed, nothing was changed:`);
    expect(lines).toContain(`  - a local cluster ${name} exists already (nodes ${name}-server-0)`);
    expect(lines).toContain(`  - --driver vfio-pci: the vfio-pci driver is not loaded (no ${sys!.sim.p('bus/pci/drivers/vfio-pci')}): run modprobe vfio-pci`);
    const pfLine = lines.find((l) => l.includes('3 agents need 3 SR-IOV PFs'))!;
    expect(pfLine).toContain('0 eligible of 3 found');
    expect(pfLine).toContain(`${b.name} (${b.bdf}) is excluded`);
    expect(pfLine).toContain(`${a.name} (${a.bdf}) supports 8 VFs, 9 asked`);
    expect(pfLine).toContain(`${c.name} (${c.bdf}) supports 8 VFs, 9 asked`);
    expect(namespacesWith(`${name}-`)).toEqual([`${name}-server-0`]);
    expect(existsSync(clusterDir(stateDirOfTest(), name))).toBe(false);
    for (const pf of [a, b, c]) expect(nicState(pf.name)).toEqual(pf.before);
  });
});

describe("the host's uplink", () => {
  it('up never plans it — the link of its default route, the link to its nameserver — naming the route; the PF neither route leaves through stays eligible', async () => {
    assertBuilt();
    // sriovctl runs in `host`, which plays the host: its own default route and nameserver (never this machine's).
    // Only preflight runs there: nodes a local cluster makes under `ip netns exec` are mounts of its own mount namespace
    const host = s.netns('host');
    sys = fakeSysfs();
    const [up, dns, plain] = [
      { suffix: 'up', bdf: '0000:3d:00.0' },
      { suffix: 'dns', bdf: '0000:3d:00.1' },
      { suffix: 'pl', bdf: '0000:3e:00.0' },
    ].map(({ suffix, bdf }) => {
      const [nic] = s.veth(suffix, `${suffix}p`, host);
      sys!.sim.addPf({ bdf, totalVfs: 2, netdev: { name: nic, mac: nicState(nic, host)!.mac } });
      return { name: nic, bdf };
    });
    const played = playHost(s, host, { uplink: up.name, dnsLink: dns.name });
    const hostNow = () => ({ links: [up, dns, plain].map((p) => nicState(p.name, host)), routes: ip('-n', host, 'route', 'show', 'table', 'all') });
    const before = hostNow();
    const inHost = (...args: string[]) => sriovctlProcess({ stateDir: stateDirOfTest(), sysfsRoot: sys!.root }, args, { netns: host });
    const upRoute = `default via ${played.gateway} in table main`;
    const dnsRoute = `route to nameserver ${played.nameserver} (${played.nameserver}/32 via 10.62.0.1 in table main)`;

    for (const [pf, route] of [[up, upRoute], [dns, dnsRoute]] as const) {
      const r = await inHost('cluster', 'up', '--name', name, '--agents', '1', '--vfs', '1', '--no-simulate', '--pf', pf.name);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        `sriovctl: cluster up ${name}: preflight failed, nothing was changed:`,
        `  - --pf ${pf.name}: ${pf.name} (${pf.bdf}) is the host's uplink (${route})`,
      ]);
    }
    const three = await inHost('cluster', 'up', '--name', name, '--agents', '3', '--vfs', '1', '--no-simulate');
    expect(three.code).toBe(1);
    expect(three.stderr.trim().split('\n')).toHaveLength(2);
    expect(three.stderr).toContain(`1 eligible of 3 found (${up.name} (${up.bdf}) is the host's uplink (${upRoute}); ${dns.name} (${dns.bdf}) is the host's uplink (${dnsRoute}))`);
    expect(hostNow()).toEqual(before);
    expect(namespacesWith(`${name}-`)).toEqual([]);
    expect(findRecords()).toEqual([]);
  });
});

/** The state dir this test gave its sriovctl processes (through the environment). */
function stateDirOfTest(): string {
  return loadConfig(process.env).stateDir;
}
