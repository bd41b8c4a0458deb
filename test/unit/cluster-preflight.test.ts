import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingTools, planPfs, preflightError, type PfCandidate } from '../../src/cluster/orchestration/preflight';

const pf = (address: string, name: string | null, extra: Partial<PfCandidate> = {}): PfCandidate => ({
  address,
  name,
  totalVfs: 8,
  lentTo: null,
  ...extra,
});

const candidates = [
  pf('0000:03:00.0', 'eth1'),
  pf('0000:03:00.1', 'eth10'),
  pf('0000:04:00.0', 'eno1'),
  pf('0000:05:00.0', 'ens5', { totalVfs: 2 }),
  pf('0000:06:00.0', null),
  pf('0000:07:00.0', 'ens7', { lentTo: 'cni:abc/net1' }),
];
const base = { candidates, requested: [], exclude: [], uplinks: [{ name: 'eno1', route: 'default via 192.0.2.1 in table main' }], agents: 2, vfs: 4 };

describe('PF plan', () => {
  it("picks eligible PFs in address order, skipping the host's uplink", () => {
    const plan = planPfs(base);
    expect(plan.problems).toEqual([]);
    expect(plan.chosen.map((c) => c.name)).toEqual(['eth1', 'eth10']);
  });

  it('excludes by exact name only: eth1 does not exclude eth10', () => {
    const plan = planPfs({ ...base, exclude: ['eth1'] });
    expect(plan.problems).toHaveLength(1);
    expect(plan.chosen.map((c) => c.name)).toEqual(['eth10']);
    expect(planPfs({ ...base, exclude: ['0000:03:00.1'], vfs: 2, agents: 2 }).chosen.map((c) => c.name)).toEqual(['eth1', 'ens5']);
  });

  it('lists every reason when there are too few', () => {
    const plan = planPfs({ ...base, agents: 3 });
    expect(plan.problems).toHaveLength(1);
    const p = plan.problems[0];
    expect(p).toContain('3 agents need 3 SR-IOV PFs');
    expect(p).toContain('2 eligible of 6 found');
    expect(p).toContain("eno1 (0000:04:00.0) is the host's uplink (default via 192.0.2.1 in table main)");
    expect(p).toContain('ens5 (0000:05:00.0) supports 2 VFs, 4 asked');
    expect(p).toContain('0000:06:00.0 has no network interface in this namespace');
    expect(p).toContain('ens7 (0000:07:00.0) is lent to cni:abc/net1');
  });

  it('--pf: used in order, each one checked, count checked', () => {
    expect(planPfs({ ...base, requested: ['0000:03:00.1', 'eth1'] }).chosen.map((c) => c.name)).toEqual(['eth10', 'eth1']);
    const bad = planPfs({ ...base, requested: ['eno1', 'nope', 'eth1', 'eth1'], agents: 2 });
    expect(bad.problems).toEqual([
      "--pf eno1: eno1 (0000:04:00.0) is the host's uplink (default via 192.0.2.1 in table main)",
      '--pf nope: no SR-IOV PF has that name or address',
      '--pf eth1: given twice',
    ]);
    expect(planPfs({ ...base, requested: ['eth1'] }).problems).toEqual(['2 agents need 2 PFs (one each); --pf names 1']);
    expect(planPfs({ ...base, requested: ['eth1'], exclude: ['eth1'], agents: 1 }).problems).toEqual(['--pf eth1: eth1 (0000:03:00.0) is excluded']);
  });

  it('a PF without sriov_totalvfs is not refused for its VF count', () => {
    expect(planPfs({ ...base, candidates: [pf('netdevsim1', 'eth0', { totalVfs: null })], agents: 1, vfs: 64 }).problems).toEqual([]);
  });
});

describe('tools and the error', () => {
  it('names every missing tool once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sriovctl-path-'));
    try {
      writeFileSync(join(dir, 'k3d'), '#!/bin/sh\n', { mode: 0o755 });
      writeFileSync(join(dir, 'kubectl'), 'not executable', { mode: 0o644 });
      expect(missingTools(['k3d', 'kubectl', 'docker', 'k3d'], { PATH: dir })).toEqual([
        'kubectl is not installed (not on PATH)',
        'docker is not installed (not on PATH)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one error, one line per problem', () => {
    const e = preflightError(['a', 'b']);
    expect(e.code).toBe('PREFLIGHT');
    expect(e.message).toBe('preflight failed, nothing was changed:\n  - a\n  - b');
  });
});
