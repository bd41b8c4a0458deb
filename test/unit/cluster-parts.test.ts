import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectContainerRuntime } from '../../src/cluster/container-runtime';
import { allocatableOf } from '../../src/cluster/kube';
import { localNodeNames, parseLocalNodes } from '../../src/cluster/providers/local';
import { simNicPlan, vfPeerName } from '../../src/cluster/sim-lab';
import { clusterMeta, readClusterMeta } from '../../src/cluster/sriov-stage';
import { runTool, shellQuote } from '../../src/cluster/tools';
import { assertClusterName, clusterOwner, clusterOwnerPrefix } from '../../src/cluster/types';
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

describe('cluster record meta', () => {
  it('round-trips, and carries the VF count in the shape attach/detach/cleanup read', () => {
    const meta = clusterMeta('lab', 'lab-agent-0', { path: '/var/run/netns/lab-agent-0' }, '0000:3b:00.0', 2);
    expect(meta).toEqual({
      cluster: { name: 'lab', node: 'lab-agent-0' },
      attach: { target: '/var/run/netns/lab-agent-0', vfs: { pf: '0000:3b:00.0', before: 2 } },
    });
    expect(readClusterMeta(JSON.parse(JSON.stringify(meta)))).toEqual(meta);
    expect(clusterMeta('k', 'n', { pid: 42 }, 'x', 0).attach.target).toBe('pid:42');
  });

  it('is absent for attach and CNI records', () => {
    expect(readClusterMeta({ attach: { target: 'node1', vfs: { pf: 'x', before: 0 } } })).toBeNull();
    expect(readClusterMeta({ network: 'n', ipam: {} })).toBeNull();
    expect(readClusterMeta({ cluster: { name: 'lab' }, attach: { target: 't', vfs: { pf: 'x', before: 1.5 } } })).toBeNull();
  });

  it('owners', () => {
    expect(clusterOwner('lab', 'lab-agent-0')).toBe('cluster:lab/lab-agent-0');
    expect(clusterOwner('lab', 'n').startsWith(clusterOwnerPrefix('lab'))).toBe(true);
    expect(clusterOwner('lab2', 'n').startsWith(clusterOwnerPrefix('lab'))).toBe(false);
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
