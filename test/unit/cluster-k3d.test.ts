import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import {
  k3dClusterCreateArgs,
  k3dRegistryCreateArgs,
  k3sAirgapImagesNames,
  parseK3dNodes,
  PRIMARY_CNI_FILE,
} from '../../src/cluster/providers/k3d';
import type { CreateSpec } from '../../src/cluster/types';

const spec: CreateSpec = {
  name: 'lab',
  agents: 2,
  manifestsDir: '/tmp/m',
  driver: null,
  reservedCpus: '0',
  image: null,
  stateDir: '/var/lib/sriovctl',
};

describe('k3d cluster create arguments', () => {
  it("keeps k3s's flannel by default: nothing to download, no image beyond the node's", () => {
    expect(k3dClusterCreateArgs(spec, { registryPort: 5000 })).toEqual([
      'cluster', 'create', 'lab',
      '--servers', '1',
      '--agents', '2',
      '--no-lb',
      '--registry-use', 'k3d-lab-registry:5000',
      '--k3s-arg', '--kubelet-arg=cpu-manager-policy=static@agent:*',
      '--k3s-arg', '--kubelet-arg=reserved-cpus=0@agent:*',
      '--volume', '/var/lib/sriovctl:/var/lib/sriovctl@all',
      // pinned, not k3d's own default: the Kubernetes the manifests are validated for
      '--image', 'docker.io/rancher/k3s:v1.33.1-k3s1',
      '--wait', '--timeout', '300s',
    ]);
  });

  it("mounts the host's --state-dir into every node at the default state dir, the one its plugin and daemon use (one ledger)", () => {
    const args = k3dClusterCreateArgs({ ...spec, stateDir: '/srv/state' }, { registryPort: 5000 });
    const vols = args.flatMap((a, i) => (a === '--volume' ? [args[i + 1]] : []));
    expect(vols).toEqual(['/srv/state:/var/lib/sriovctl@all']);
  });

  it('airgap: no registry (its image would be pulled); a pass-through config goes first, the flags override it', () => {
    const args = k3dClusterCreateArgs({ ...spec, airgap: true, providerConfig: { apiVersion: 'k3d.io/v1alpha5', kind: 'Simple' } }, { registryPort: 5000 });
    expect(args.slice(0, 5)).toEqual(['cluster', 'create', 'lab', '--config', '/tmp/m/k3d-config.yaml']);
    expect(args.join(' ')).not.toContain('registry');
    const withImages = k3dClusterCreateArgs({ ...spec, airgap: true }, { registryPort: 5000, k3sImages: '/i/k3s-airgap-images-arm64.tar.zst' });
    expect(withImages[withImages.lastIndexOf('--volume') + 1]).toBe(
      '/i/k3s-airgap-images-arm64.tar.zst:/var/lib/rancher/k3s/agent/images/k3s-airgap-images-arm64.tar.zst@server:*;agent:*',
    );
  });

  it("names k3s's own images tarball after the nodes' architecture", () => {
    expect(k3sAirgapImagesNames('x64')).toEqual(['k3s-airgap-images-amd64.tar.zst', 'k3s-airgap-images-amd64.tar.gz', 'k3s-airgap-images-amd64.tar']);
    expect(k3sAirgapImagesNames('arm64')[0]).toBe('k3s-airgap-images-arm64.tar.zst');
  });

  it('with --primary-cni: one server, n agents, no load balancer, the registry, flannel off, the manifest auto-deployed', () => {
    expect(k3dClusterCreateArgs({ ...spec, primaryCniFile: join('/tmp/m', PRIMARY_CNI_FILE) }, { registryPort: 5000 })).toEqual([
      'cluster', 'create', 'lab',
      '--servers', '1',
      '--agents', '2',
      '--no-lb',
      '--registry-use', 'k3d-lab-registry:5000',
      '--k3s-arg', '--flannel-backend=none@server:*',
      '--k3s-arg', '--disable-network-policy@server:*',
      '--k3s-arg', '--kubelet-arg=cpu-manager-policy=static@agent:*',
      '--k3s-arg', '--kubelet-arg=reserved-cpus=0@agent:*',
      '--volume', `${join('/tmp/m', PRIMARY_CNI_FILE)}:/var/lib/rancher/k3s/server/manifests/sriovctl-primary-cni.yaml@server:0`,
      '--volume', '/var/lib/sriovctl:/var/lib/sriovctl@all',
      // pinned, not k3d's own default: the Kubernetes the manifests are validated for
      '--image', 'docker.io/rancher/k3s:v1.33.1-k3s1',
      '--wait', '--timeout', '300s',
    ]);
  });

  it('mounts /dev/vfio on agents only for vfio-pci, and passes an image when asked', () => {
    const args = k3dClusterCreateArgs({ ...spec, agents: 3, driver: 'vfio-pci', image: 'rancher/k3s:v1.30.4-k3s1', reservedCpus: '0-1' }, { registryPort: 5001 });
    expect(args.slice(args.indexOf('--agents'), args.indexOf('--agents') + 2)).toEqual(['--agents', '3']);
    expect(args).toContain('k3d-lab-registry:5001');
    expect(args).toContain('--kubelet-arg=reserved-cpus=0-1@agent:*');
    const vols = args.flatMap((a, i) => (a === '--volume' ? [args[i + 1]] : []));
    expect(vols).toContain('/dev/vfio:/dev/vfio@agent:*');
    expect(args[args.indexOf('--image') + 1]).toBe('rancher/k3s:v1.30.4-k3s1');
    expect(k3dClusterCreateArgs({ ...spec, driver: 'iavf' }, { registryPort: 5000 }).join(' ')).not.toContain('/dev/vfio');
  });

  it('creates the registry bound to localhost', () => {
    expect(k3dRegistryCreateArgs('lab', 5000)).toEqual(['registry', 'create', 'lab-registry', '--port', '127.0.0.1:5000']);
  });
});

describe('k3d node list', () => {
  const json = JSON.stringify([
    { name: 'k3d-lab-agent-1', role: 'agent', runtimeLabels: { 'k3d.cluster': 'lab' } },
    { name: 'k3d-lab-server-0', role: 'server', runtimeLabels: { 'k3d.cluster': 'lab' } },
    { name: 'k3d-lab-agent-0', role: 'agent', runtimeLabels: { 'k3d.cluster': 'lab' } },
    { name: 'k3d-lab-registry', role: 'registry', runtimeLabels: { 'k3d.cluster': 'lab' } },
    { name: 'k3d-other-agent-0', role: 'agent', runtimeLabels: { 'k3d.cluster': 'other' } },
    { name: 'k3d-lab-serverlb', role: 'loadbalancer', runtimeLabels: { 'k3d.cluster': 'lab' } },
  ]);
  it("keeps this cluster's servers and agents, sorted", () => {
    expect(parseK3dNodes(json, 'lab')).toEqual([
      { name: 'k3d-lab-agent-0', role: 'agent' },
      { name: 'k3d-lab-agent-1', role: 'agent' },
      { name: 'k3d-lab-server-0', role: 'server' },
    ]);
    expect(parseK3dNodes('[]', 'lab')).toEqual([]);
  });
});
