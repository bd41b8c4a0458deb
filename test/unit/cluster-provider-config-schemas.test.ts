// The cluster configs `cluster up` writes for kind (kind-config.yaml) and k3d (k3d-config.yaml, from cluster.yaml's
// pass-through), parsed back as the tools read them and validated strictly against the tools' own schemas
// (test/helpers/tool-config-schemas.ts says where each comes from): a misspelt field fails `kind create
// cluster`, and k3d refuses it or, in the objects its schema leaves open, drops it silently.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseClusterFile } from '../../src/cluster/orchestration/cluster-file';
import { k3dClusterConfig } from '../../src/cluster/providers/k3d';
import { kindClusterConfig } from '../../src/cluster/providers/kind';
import type { CreateSpec } from '../../src/cluster/types';
import { yaml } from '../../src/cluster/kubernetes/yaml';
import { K3D_SIMPLE_SCHEMA, KIND_CLUSTER_SCHEMA } from '../helpers/tool-config-schemas';
import { ajvProblems, strictSchema } from '../helpers/strict-fields';

type Config = Record<string, any>;

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = { kind: ajv.compile(strictSchema(KIND_CLUSTER_SCHEMA)), k3d: ajv.compile(strictSchema(K3D_SIMPLE_SCHEMA)) };

function problems(which: 'kind' | 'k3d', config: Config): string[] {
  const validate = validators[which];
  return validate(config) ? [] : ajvProblems(validate.errors);
}

/**
 * The config as the tool reads it: the YAML text `create` writes, parsed back, each alias (the nodes share their
 * mounts: `&a1`/`*a1`) its own copy, as a Go decoder makes it.
 */
function written(config: Record<string, unknown>): Config {
  return JSON.parse(JSON.stringify(parse(yaml().stringify(config))));
}

const spec: CreateSpec = { name: 'lab', agents: 2, manifestsDir: '/tmp/m', driver: null, reservedCpus: '0', image: null, stateDir: '/var/lib/sriovctl' };

/** A provider's pass-through config as cluster.yaml gives it. */
function passThrough(which: 'kind' | 'k3d', body: string): Record<string, unknown> {
  const header = which === 'k3d' ? 'apiVersion: k3d.io/v1alpha5\n    kind: Simple' : 'apiVersion: kind.x-k8s.io/v1alpha4\n    kind: Cluster';
  const text = `apiVersion: sriovctl/v1alpha1\nkind: Cluster\nspec:\n  provider: ${which}\n  ${which}:\n    ${header}\n${body}`;
  return parseClusterFile(text, 'cluster.yaml', '/srv/lab').providerConfig[which]!;
}

const KIND_OWN = passThrough(
  'kind',
  [
    '    networking: { podSubnet: 10.250.0.0/16, kubeProxyMode: nftables, dnsSearch: [lab.example] }',
    '    featureGates: { InPlacePodVerticalScaling: true }',
    '    runtimeConfig: { "api/alpha": "false" }',
    '    kubeadmConfigPatchesJSON6902: [{ group: kubeadm.k8s.io, version: v1beta3, kind: ClusterConfiguration, patch: "[]" }]',
    '    containerdConfigPatches: ["[plugins.cri]"]',
    '',
  ].join('\n'),
);

const K3D_OWN = passThrough(
  'k3d',
  [
    '    kubeAPI: { hostIP: 127.0.0.1, hostPort: "6550" }',
    '    ports: [{ port: 8080:80, nodeFilters: [server:0] }]',
    '    env: [{ envVar: A=b, nodeFilters: [all] }]',
    '    files: [{ source: a.yaml, destination: /var/lib/rancher/k3s/server/manifests/a.yaml }]',
    '    registries: { config: "mirrors: {}" }',
    '    hostAliases: [{ ip: 10.0.0.1, hostnames: [registry.lab] }]',
    '    options:',
    '      k3s: { extraArgs: [{ arg: --tls-san=lab.example, nodeFilters: ["server:*"] }] }',
    '      runtime: { agentsMemory: 4g, ulimits: [{ name: nofile, soft: 26677, hard: 26677 }] }',
    '      kubeconfig: { switchCurrentContext: false }',
    '',
  ].join('\n'),
);

describe('kind cluster config against kind v0.29.0 v1alpha4 Cluster, strictly', () => {
  const cases: [string, CreateSpec][] = [
    ['the defaults', spec],
    ['vfio-pci, a node image, a primary CNI', { ...spec, driver: 'vfio-pci', image: 'kindest/node:v1.33.1', primaryCniFile: '/tmp/m/00-primary-cni.yaml' }],
    ["cluster.yaml's own kind config merged in", { ...spec, providerConfig: KIND_OWN, primaryCniFile: '/tmp/m/00-primary-cni.yaml' }],
  ];
  for (const [what, s] of cases) {
    it(`is valid: ${what}`, () => {
      expect(problems('kind', written(kindClusterConfig(s)))).toEqual([]);
    });
  }

  const breakages: [string, (c: Config) => void, string][] = [
    ['a misspelt top-level field', (c) => (c.nodez = c.nodes), 'unknown field "nodez"'],
    ['a misspelt node field', (c) => (c.nodes[1].extraMount = c.nodes[1].extraMounts), 'unknown field "nodes[1].extraMount"'],
    ['a misspelt mount field', (c) => (c.nodes[0].extraMounts[0].readonly = true), 'unknown field "nodes[0].extraMounts[0].readonly"'],
    ['a misspelt networking field', (c) => (c.networking.disableDefaultCni = true), 'unknown field "networking.disableDefaultCni"'],
  ];
  for (const [what, breakIt, message] of breakages) {
    it(`refuses ${what}`, () => {
      const config = written(kindClusterConfig({ ...spec, providerConfig: KIND_OWN }));
      breakIt(config);
      expect(problems('kind', config)).toEqual([message]);
    });
  }

  it('leaves its maps free: labels, feature gates, runtime config', () => {
    const config = written(kindClusterConfig({ ...spec, providerConfig: KIND_OWN }));
    config.nodes[1].labels = { 'example.com/any': 'x' };
    config.featureGates.AnyGate = false;
    config.runtimeConfig['any/v1'] = 'true';
    expect(problems('kind', config)).toEqual([]);
  });
});

describe('k3d cluster config against k3d v5.8.3 v1alpha5 Simple, strictly', () => {
  it("is valid: cluster.yaml's own k3d config, named after the cluster", () => {
    const config = written(k3dClusterConfig({ ...spec, providerConfig: K3D_OWN }));
    expect(config.metadata).toEqual({ name: 'lab' });
    expect(problems('k3d', config)).toEqual([]);
  });

  // the last three are in objects k3d's own schema leaves open: k3d would drop them silently
  const breakages: [string, (c: Config) => void, string][] = [
    ['a misspelt metadata field', (c) => (c.metadata.nme = 'lab'), 'unknown field "metadata.nme"'],
    ['a misspelt node filter list', (c) => (c.options.k3s.extraArgs[0].nodeFilter = ['server:*']), 'unknown field "options.k3s.extraArgs[0].nodeFilter"'],
    ['a misspelt runtime option', (c) => (c.options.runtime.agentMemory = '4g'), 'unknown field "options.runtime.agentMemory"'],
    ['a misspelt registries field', (c) => (c.registries.confg = 'mirrors: {}'), 'unknown field "registries.confg"'],
    ['a misspelt host alias field', (c) => (c.hostAliases[0].hostname = 'registry.lab'), 'unknown field "hostAliases[0].hostname"'],
  ];
  for (const [what, breakIt, message] of breakages) {
    it(`refuses ${what}`, () => {
      const config = written(k3dClusterConfig({ ...spec, providerConfig: K3D_OWN }));
      breakIt(config);
      expect(problems('k3d', config)).toEqual([message]);
    });
  }
});
