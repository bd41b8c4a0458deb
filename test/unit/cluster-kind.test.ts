import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kindClusterConfig, kindCreateArgs, parseKindNodes } from '../../src/cluster/providers/kind';
import type { CreateSpec } from '../../src/cluster/types';

const spec: CreateSpec = { name: 'lab', agents: 2, manifestsDir: '/tmp/m', driver: null, reservedCpus: '0', image: null, stateDir: '/var/lib/sriovctl' };

const LEDGER_MOUNT = { hostPath: '/var/lib/sriovctl', containerPath: '/var/lib/sriovctl' };

describe('kind cluster config', () => {
  it('has one control-plane and n workers with the static CPU manager', () => {
    const cfg = kindClusterConfig(spec) as any;
    expect(cfg.kind).toBe('Cluster');
    expect(cfg.apiVersion).toBe('kind.x-k8s.io/v1alpha4');
    expect(cfg.name).toBe('lab');
    expect(cfg.nodes.map((n: any) => n.role)).toEqual(['control-plane', 'worker', 'worker']);
    expect(cfg.nodes[0].kubeadmConfigPatches).toBeUndefined();
    for (const w of cfg.nodes.slice(1)) {
      expect(w.kubeadmConfigPatches).toHaveLength(1);
      const patch = parse(w.kubeadmConfigPatches[0]);
      expect(patch).toEqual({
        kind: 'JoinConfiguration',
        nodeRegistration: { kubeletExtraArgs: { 'cpu-manager-policy': 'static', 'reserved-cpus': '0' } },
      });
      expect(w.extraMounts).toEqual([LEDGER_MOUNT]);
    }
  });

  it("mounts the host's --state-dir into every node at the default state dir, the one its plugin and daemon use (one ledger)", () => {
    const cfg = kindClusterConfig({ ...spec, stateDir: '/srv/state' }) as any;
    for (const n of cfg.nodes) {
      expect(n.extraMounts).toContainEqual({ hostPath: '/srv/state', containerPath: '/var/lib/sriovctl' });
      expect(n.extraMounts.filter((m: any) => m.hostPath === '/srv/state' || m.containerPath === '/srv/state')).toHaveLength(1);
    }
  });

  it('mounts /dev/vfio on workers for vfio-pci and sets the node image', () => {
    const cfg = kindClusterConfig({ ...spec, agents: 1, driver: 'vfio-pci', image: 'kindest/node:v1.31.0' }) as any;
    expect(cfg.nodes[1].extraMounts).toEqual([LEDGER_MOUNT, { hostPath: '/dev/vfio', containerPath: '/dev/vfio' }]);
    expect(cfg.nodes.map((n: any) => n.image)).toEqual(['kindest/node:v1.31.0', 'kindest/node:v1.31.0']);
  });

  it('create runs with the generated config', () => {
    expect(kindCreateArgs(spec)).toEqual(['create', 'cluster', '--name', 'lab', '--config', '/tmp/m/kind-config.yaml', '--wait', '300s']);
  });
});

describe('kind nodes', () => {
  it('maps control-plane to server and workers to agents, in worker order', () => {
    const text = 'lab-worker2\nlab-control-plane\nlab-worker10\nlab-worker\nlabx-worker\nother-worker\n';
    expect(parseKindNodes(text, 'lab')).toEqual([
      { name: 'lab-control-plane', role: 'server' },
      { name: 'lab-worker', role: 'agent' },
      { name: 'lab-worker2', role: 'agent' },
      { name: 'lab-worker10', role: 'agent' },
    ]);
  });
});
