import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectContainerRuntime } from '../../src/cluster/tools/container-runtime';
import { allocatableOf } from '../../src/cluster/kubernetes/kubectl';
import { localNodeNames, parseLocalNodes } from '../../src/cluster/providers/local';
import { simNicPlan, vfPeerName } from '../../src/cluster/lab/sim-lab';
import { ownerKey, ownerMatches } from '../../src/ledger/owner';
import { runTool, shellQuote } from '../../src/cluster/tools/run-tool';
import { assertClusterName, clusterOwner, ofCluster } from '../../src/cluster/types';
import { isBdf } from '../../src/sriov';

describe('local provider node names', () => {
  it('server-0 and agent-<i>, parsed back in order, other clusters ignored', () => {
    expect(localNodeNames('lab', 2)).toEqual([
      { name: 'lab-server-0', role: 'server' },
      { name: 'lab-agent-0', role: 'agent' },
      { name: 'lab-agent-1', role: 'agent' },
    ]);
    const names = ['lab-agent-10', 'lab-agent-2', 'lab-server-0', 'lab-x-agent-0', 'lab2-agent-0', 'lab-agent-', 'other', 'lab-agent-0'];
    expect(parseLocalNodes(names, 'lab').map((n) => n.name)).toEqual(['lab-server-0', 'lab-agent-0', 'lab-agent-2', 'lab-agent-10']);
  });
});

describe('simulated NIC plan', () => {
  it('is stable per cluster and distinct between clusters', () => {
    const a = simNicPlan('lab', 3);
    expect(simNicPlan('lab', 3)).toEqual(a);
    const b = simNicPlan('lab2', 3);
    for (const x of a) for (const y of b) {
      expect(x.name).not.toBe(y.name);
      expect(x.pciAddress).not.toBe(y.pciAddress);
      expect(x.mac).not.toBe(y.mac);
    }
  });

  it('gives valid, unique addresses away from domain 0000, names that leave room for VF names', () => {
    const plan = simNicPlan('a-cluster-with-a-long-name', 16);
    expect(new Set(plan.map((p) => p.pciAddress)).size).toBe(16);
    expect(new Set(plan.map((p) => p.mac)).size).toBe(16);
    for (const p of plan) {
      expect(isBdf(p.pciAddress)).toBe(true);
      expect(parseInt(p.pciAddress.slice(0, 4), 16) & 0x8000).toBe(0x8000);
      expect(p.mac).toMatch(/^02:/); // locally administered, unicast
      expect(`${p.name}v99`.length).toBeLessThanOrEqual(15);
      expect(vfPeerName(`${p.name}v99`).length).toBeLessThanOrEqual(15);
      expect(p.peer.length).toBeLessThanOrEqual(15);
    }
  });
});

describe('cluster owners', () => {
  it('name the node, and match the cluster they belong to', () => {
    expect(ownerKey(clusterOwner('lab', 'lab-agent-0'))).toBe('cluster:lab/lab-agent-0');
    expect(ownerMatches(ownerKey(clusterOwner('lab', 'n')), ofCluster('lab'))).toBe(true);
    expect(ownerMatches(ownerKey(clusterOwner('lab2', 'n')), ofCluster('lab'))).toBe(false);
    expect(ownerMatches('attach:lab', ofCluster('lab'))).toBe(false);
  });
});

describe('cluster names', () => {
  it('accepts what k3d, kind and namespaces accept', () => {
    for (const ok of ['a', 'lab', 'sriov-1', 'x'.repeat(32)]) expect(() => assertClusterName(ok)).not.toThrow();
    for (const bad of ['', '-a', 'a-', 'Lab', 'a_b', 'a/b', 'a b', '..', 'x'.repeat(33)]) expect(() => assertClusterName(bad)).toThrow(TypeError);
  });
});

describe('allocatable', () => {
  it('reads the quantity, 0 when absent', () => {
    expect(allocatableOf({ status: { allocatable: { 'kubevirt.io/sriov_net': '4' } } }, 'kubevirt.io/sriov_net')).toBe(4);
    expect(allocatableOf({ status: { allocatable: { cpu: '2' } } }, 'kubevirt.io/sriov_net')).toBe(0);
    expect(allocatableOf({}, 'x')).toBe(0);
    expect(allocatableOf({ status: { allocatable: { x: 'lots' } } }, 'x')).toBe(0);
  });
});

describe('container runtime detection', () => {
  it('asked > SRIOVCTL_CONTAINER_RUNTIME > KIND_EXPERIMENTAL_PROVIDER > first on PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sriovctl-rt-'));
    try {
      writeFileSync(join(dir, 'podman'), '#!/bin/sh\n', { mode: 0o755 });
      expect(detectContainerRuntime(null, { PATH: dir })).toBe('podman');
      symlinkSync(join(dir, 'podman'), join(dir, 'docker'));
      expect(detectContainerRuntime(null, { PATH: dir })).toBe('docker');
      expect(detectContainerRuntime(null, { PATH: dir, KIND_EXPERIMENTAL_PROVIDER: 'podman' })).toBe('podman');
      expect(detectContainerRuntime(null, { PATH: dir, SRIOVCTL_CONTAINER_RUNTIME: 'podman', KIND_EXPERIMENTAL_PROVIDER: 'docker' })).toBe('podman');
      expect(detectContainerRuntime('docker', { PATH: '', SRIOVCTL_CONTAINER_RUNTIME: 'podman' })).toBe('docker');
      expect(detectContainerRuntime(null, { PATH: '/nonexistent' })).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('external tools', () => {
  it('returns stdout; a failure carries the tool\'s last words; a missing tool and a hang are named', async () => {
    await expect(runTool('sh', ['-c', 'echo hi; echo warn >&2'])).resolves.toEqual({ stdout: 'hi\n', stderr: 'warn\n' });
    await expect(runTool('sh', ['-c', 'echo a >&2; echo "the real reason" >&2; exit 3'])).rejects.toMatchObject({
      code: 'TOOL_FAILED',
      message: 'the real reason',
      op: 'sh -c echo a >&2; echo "the real reason" >&2; exit 3',
    });
    await expect(runTool('no-such-tool-here', [])).rejects.toMatchObject({ code: 'ENOENT', message: 'no-such-tool-here is not installed (not on PATH)' });
    await expect(runTool('sleep', ['5'], { timeoutMs: 100 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    await expect(runTool('cat', [], { input: 'fed' })).resolves.toMatchObject({ stdout: 'fed' });
  });

  it('quotes for display only when needed', () => {
    expect(shellQuote('--k3s-arg')).toBe('--k3s-arg');
    expect(shellQuote('--flannel-backend=none@server:*')).toBe("'--flannel-backend=none@server:*'");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});
