import { describe, expect, it } from 'vitest';
import { parseClusterFile } from '../../src/cluster/orchestration/cluster-file';
import { upOptionsOf } from '../../src/cli/cluster';
import { UP_DEFAULTS } from '../../src/cluster/orchestration/up';

const FULL = `apiVersion: sriovctl/v1alpha1
kind: Cluster
metadata:
  name: lab
spec:
  provider: k3d
  runtime: podman
  agents: 3
  vfs: 8
  pfs: [ens1f0, ens1f1, ens2f0]
  exclude: [eno1]
  driver: vfio-pci
  nodeImage: docker.io/rancher/k3s:v1.31.5-k3s1
  reservedCpus: 0-1
  primaryCni: manifests/calico.yaml
  images:
    archives: images
    airgap: true
  sriovCniName: sriov
  k3d:
    apiVersion: k3d.io/v1alpha5
    kind: Simple
    options:
      k3s:
        extraArgs:
          - arg: --tls-san=lab.example
            nodeFilters: [server:*]
`;

const parse = (text: string) => parseClusterFile(text, 'cluster.yaml', '/srv/lab');
const errorOf = (text: string) => {
  try {
    parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('no error');
};
const withSpec = (spec: string) => `apiVersion: sriovctl/v1alpha1\nkind: Cluster\nspec:\n${spec}`;

describe('cluster.yaml', () => {
  it('reads every field; paths are relative to the file, URLs stay URLs', () => {
    expect(parse(FULL)).toEqual({
      name: 'lab',
      provider: 'k3d',
      runtime: 'podman',
      agents: 3,
      vfs: 8,
      pf: ['ens1f0', 'ens1f1', 'ens2f0'],
      exclude: ['eno1'],
      driver: 'vfio-pci',
      image: 'docker.io/rancher/k3s:v1.31.5-k3s1',
      reservedCpus: '0-1',
      primaryCni: '/srv/lab/manifests/calico.yaml',
      imagesDir: '/srv/lab/images',
      airgap: true,
      sriovCniName: 'sriov',
      providerConfig: {
        k3d: {
          apiVersion: 'k3d.io/v1alpha5',
          kind: 'Simple',
          options: { k3s: { extraArgs: [{ arg: '--tls-san=lab.example', nodeFilters: ['server:*'] }] } },
        },
      },
    });
    expect(parse(withSpec('  primaryCni: https://example.invalid/calico.yaml\n')).primaryCni).toBe('https://example.invalid/calico.yaml');
    expect(parse('apiVersion: sriovctl/v1alpha1\nkind: Cluster\n')).toEqual({ providerConfig: {} });
  });

  it('an unknown key is an error naming its path', () => {
    expect(errorOf(withSpec('  agnets: 2\n'))).toBe('cluster.yaml: spec.agnets: unknown key');
    expect(errorOf(withSpec('  images:\n    airgapped: true\n'))).toBe('cluster.yaml: spec.images.airgapped: unknown key');
    expect(errorOf('apiVersion: sriovctl/v1alpha1\nkind: Cluster\nmetadata:\n  labels: {}\n')).toBe('cluster.yaml: metadata.labels: unknown key');
    expect(errorOf('apiVersion: sriovctl/v1alpha1\nkind: Cluster\nspecs: {}\n')).toBe('cluster.yaml: specs: unknown key');
  });

  it('wrong types and values are errors naming the path and the value', () => {
    expect(errorOf(withSpec('  agents: two\n'))).toBe('cluster.yaml: spec.agents: must be an integer from 1 to 64, not "two"');
    expect(errorOf(withSpec('  vfs: 300\n'))).toBe('cluster.yaml: spec.vfs: must be an integer from 0 to 256, not 300');
    expect(errorOf(withSpec('  provider: minikube\n'))).toBe('cluster.yaml: spec.provider: must be one of local, k3d, kind, not "minikube"');
    expect(errorOf(withSpec('  runtime: containerd\n'))).toBe('cluster.yaml: spec.runtime: must be one of docker, podman, not "containerd"');
    expect(errorOf(withSpec('  pfs: ens1f0\n'))).toBe('cluster.yaml: spec.pfs: must be a list, not "ens1f0"');
    expect(errorOf(withSpec('  pfs: [ens1f0, 3]\n'))).toBe('cluster.yaml: spec.pfs[1]: must be a non-empty string, not 3');
    expect(errorOf(withSpec('  images:\n    airgap: yes please\n'))).toBe('cluster.yaml: spec.images.airgap: must be true or false, not "yes please"');
    expect(errorOf('apiVersion: sriovctl/v1alpha1\nkind: Cluster\nmetadata:\n  name: Lab_1\n')).toMatch(/^cluster\.yaml: metadata\.name: invalid cluster name "Lab_1"/);
    expect(errorOf('apiVersion: v1\nkind: Cluster\n')).toBe('cluster.yaml: apiVersion: must be sriovctl/v1alpha1, not "v1"');
    expect(errorOf('apiVersion: sriovctl/v1alpha1\nkind: Pod\n')).toBe('cluster.yaml: kind: must be Cluster, not "Pod"');
    expect(errorOf('- a\n')).toBe('cluster.yaml: must be a mapping, not a list');
    expect(errorOf(withSpec('  sriovCniName: ../sriov\n'))).toMatch(/^cluster\.yaml: spec\.sriovCniName: /);
  });

  it('is one valid YAML document without duplicate keys', () => {
    expect(errorOf(withSpec('  agents: 1\n  agents: 2\n'))).toMatch(/^cluster\.yaml: not valid YAML: Map keys must be unique/);
    expect(errorOf('apiVersion: sriovctl/v1alpha1\n---\nkind: Cluster\n')).toBe('cluster.yaml: must hold exactly one YAML document');
  });

  it("the tool's own config: its version, its keys; what sriovctl sets is refused", () => {
    const k3d = (body: string) => withSpec(`  provider: k3d\n  k3d:\n    apiVersion: k3d.io/v1alpha5\n    kind: Simple\n${body}`);
    expect(errorOf(k3d('    agents: 3\n'))).toBe('cluster.yaml: spec.k3d.agents: set by sriovctl (from spec.agents)');
    expect(errorOf(k3d('    image: rancher/k3s:latest\n'))).toBe('cluster.yaml: spec.k3d.image: set by sriovctl (from spec.nodeImage)');
    expect(errorOf(k3d('    portz: []\n'))).toMatch(/^cluster\.yaml: spec\.k3d\.portz: unknown key \(k3d\.io\/v1alpha5 Simple takes kubeAPI, network, /);
    expect(errorOf(withSpec('  k3d:\n    apiVersion: k3d.io/v1alpha4\n    kind: Simple\n'))).toBe('cluster.yaml: spec.k3d.apiVersion: must be k3d.io/v1alpha5, not "k3d.io/v1alpha4"');
    const kind = (body: string) => withSpec(`  kind:\n    apiVersion: kind.x-k8s.io/v1alpha4\n    kind: Cluster\n${body}`);
    expect(parse(kind('    networking:\n      ipFamily: dual\n')).providerConfig.kind).toEqual({
      apiVersion: 'kind.x-k8s.io/v1alpha4',
      kind: 'Cluster',
      networking: { ipFamily: 'dual' },
    });
    expect(errorOf(kind('    nodes: []\n'))).toBe('cluster.yaml: spec.kind.nodes: set by sriovctl (from spec.agents and spec.nodeImage)');
    expect(errorOf(withSpec('  provider: kind\n  k3d:\n    apiVersion: k3d.io/v1alpha5\n    kind: Simple\n'))).toBe('cluster.yaml: spec.k3d: is for provider k3d, spec.provider is kind');
  });
});

describe('cluster up: flags over the file over the defaults', () => {
  const file = parse(FULL);
  it('takes the file where no flag is given', () => {
    const { provider, options, providerOptions } = upOptionsOf({ file: 'cluster.yaml' }, file);
    expect(provider).toBe('k3d');
    expect(options).toMatchObject({
      name: 'lab', agents: 3, vfs: 8, pf: ['ens1f0', 'ens1f1', 'ens2f0'], exclude: ['eno1'], driver: 'vfio-pci',
      image: 'docker.io/rancher/k3s:v1.31.5-k3s1', reservedCpus: '0-1', runtime: 'podman', primaryCni: '/srv/lab/manifests/calico.yaml',
      imagesDir: '/srv/lab/images', airgap: true, providerConfig: file.providerConfig.k3d, sriovCniName: 'sriov',
    });
    expect(providerOptions).toMatchObject({ runtime: 'podman', primaryCni: '/srv/lab/manifests/calico.yaml' });
  });

  it('a flag wins over the file', () => {
    const { options, providerOptions } = upOptionsOf(
      { file: 'cluster.yaml', name: 'other', agents: 1, vfs: 2, pf: ['ens9'], runtime: 'docker', airgap: false, images: '/x', primaryCni: '/y.yaml', sriovCniName: 'sriov-net' },
      file,
    );
    expect(options).toMatchObject({ name: 'other', agents: 1, vfs: 2, pf: ['ens9'], runtime: 'docker', airgap: false, imagesDir: '/x', primaryCni: '/y.yaml', sriovCniName: 'sriov-net' });
    expect(providerOptions.runtime).toBe('docker');
  });

  it('the defaults where neither says anything', () => {
    const { provider, options } = upOptionsOf({}, null);
    expect(provider).toBe('local');
    expect(options).toMatchObject({ name: 'sriov', agents: UP_DEFAULTS.agents, vfs: UP_DEFAULTS.vfs, airgap: false, imagesDir: null, primaryCni: null, providerConfig: null });
  });

  it("--provider other than the file's pass-through is an error", () => {
    expect(() => upOptionsOf({ file: 'cluster.yaml', provider: 'kind' }, file)).toThrow('cluster.yaml: spec.k3d: is for provider k3d, the cluster is made with kind');
  });
});
