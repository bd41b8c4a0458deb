// JSON schemas of the configs `cluster up` writes for the tools it runs (kind, k3d, the device plugin), written here
// from the pinned tools' own sources (what each field is called and holds; descriptions, examples and string formats left out).
// They declare properties and leave closing them to `strictSchema` (./strict-fields.ts), like the Kubernetes ones.

const string = { type: 'string' };
const strings = { type: 'array', items: string };
const boolean = { type: 'boolean' };
const integer = { type: 'integer' };
const stringMap = { type: 'object', additionalProperties: string };

/**
 * kind v0.29.0 (commit 200b3aac0b5ff698426715db9b4d13288bd470a3), `kind.x-k8s.io/v1alpha4` Cluster: the Go
 * types in pkg/apis/config/v1alpha4/types.go (their yaml tags), the enums from pkg/internal/apis/config/validate.go.
 * kind decodes the file strictly itself (pkg/internal/apis/config/encoding/load.go: yaml KnownFields), so an
 * unknown field fails `kind create cluster`; this finds it before a cluster is made.
 */
export const KIND_CLUSTER_SCHEMA = (() => {
  const patchJson6902 = {
    type: 'object',
    required: ['group', 'version', 'kind', 'patch'],
    properties: { group: string, version: string, kind: string, patch: string },
  };
  const node = {
    type: 'object',
    properties: {
      role: { enum: ['control-plane', 'worker'] },
      image: string,
      labels: stringMap,
      extraMounts: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            containerPath: string,
            hostPath: string,
            readOnly: boolean,
            selinuxRelabel: boolean,
            propagation: { enum: ['None', 'HostToContainer', 'Bidirectional'] },
          },
        },
      },
      extraPortMappings: {
        type: 'array',
        items: {
          type: 'object',
          properties: { containerPort: integer, hostPort: integer, listenAddress: string, protocol: { enum: ['TCP', 'UDP', 'SCTP'] } },
        },
      },
      kubeadmConfigPatches: strings,
      kubeadmConfigPatchesJSON6902: { type: 'array', items: patchJson6902 },
    },
  };
  return {
    type: 'object',
    required: ['kind', 'apiVersion'],
    properties: {
      kind: { const: 'Cluster' },
      apiVersion: { const: 'kind.x-k8s.io/v1alpha4' },
      name: string,
      nodes: { type: 'array', items: node },
      networking: {
        type: 'object',
        properties: {
          ipFamily: { enum: ['ipv4', 'ipv6', 'dual'] },
          apiServerPort: integer,
          apiServerAddress: string,
          podSubnet: string,
          serviceSubnet: string,
          disableDefaultCNI: boolean,
          kubeProxyMode: { enum: ['iptables', 'ipvs', 'nftables', 'none'] },
          dnsSearch: strings,
        },
      },
      featureGates: { type: 'object', additionalProperties: boolean },
      runtimeConfig: stringMap,
      kubeadmConfigPatches: strings,
      kubeadmConfigPatchesJSON6902: { type: 'array', items: patchJson6902 },
      containerdConfigPatches: strings,
      containerdConfigPatchesJSON6902: strings,
    },
  };
})();

/**
 * k3d v5.8.3 (commit 201b614ea6798f0ee9e75c63360eef891b36bb19), `k3d.io/v1alpha5` Simple: the JSON schema k3d
 * validates a config file against (pkg/config/v1alpha5/schema.json, checked with gojsonschema in
 * pkg/config/jsonschema.go) before viper decodes it leniently. That schema closes most objects itself but not
 * options.runtime, hostAliases[] and registries (its `additionalProperties: false` sits inside `properties`, as a
 * property of that name): there k3d drops an unknown key silently. Closed here, as everywhere.
 */
export const K3D_SIMPLE_SCHEMA = (() => {
  const nodeFilters = strings;
  const withFilters = (field: string, extra: Record<string, unknown> = {}) => ({
    type: 'object',
    properties: { [field]: string, nodeFilters, ...extra },
  });
  return {
    type: 'object',
    required: ['apiVersion', 'kind'],
    properties: {
      apiVersion: { const: 'k3d.io/v1alpha5' },
      kind: { const: 'Simple' },
      metadata: { type: 'object', properties: { name: string } },
      servers: { type: 'number', minimum: 1 },
      agents: { type: 'number', minimum: 0 },
      kubeAPI: { type: 'object', properties: { host: string, hostIP: string, hostPort: string } },
      image: string,
      network: string,
      subnet: string,
      token: string,
      volumes: { type: 'array', items: withFilters('volume') },
      ports: { type: 'array', items: withFilters('port') },
      files: { type: 'array', items: { ...withFilters('source', { destination: string, description: string }), required: ['source', 'destination'] } },
      options: {
        type: 'object',
        properties: {
          k3d: {
            type: 'object',
            properties: {
              wait: boolean,
              timeout: {},
              disableLoadbalancer: boolean,
              disableImageVolume: boolean,
              disableRollback: boolean,
              loadbalancer: { type: 'object', properties: { configOverrides: { type: 'array' } } },
            },
          },
          k3s: {
            type: 'object',
            properties: { extraArgs: { type: 'array', items: withFilters('arg') }, nodeLabels: { type: 'array', items: withFilters('label') } },
          },
          kubeconfig: { type: 'object', properties: { updateDefaultKubeconfig: boolean, switchCurrentContext: boolean } },
          runtime: {
            type: 'object',
            properties: {
              gpuRequest: string,
              serversMemory: string,
              agentsMemory: string,
              hostPidMode: boolean,
              labels: { type: 'array', items: withFilters('label') },
              ulimits: { type: 'array', items: { type: 'object', properties: { name: string, soft: { type: 'number' }, hard: { type: 'number' } } } },
            },
          },
        },
      },
      env: { type: 'array', items: withFilters('envVar') },
      registries: {
        type: 'object',
        properties: {
          create: {
            type: 'object',
            properties: {
              name: string,
              host: string,
              hostPort: string,
              image: string,
              proxy: { type: 'object', properties: { remoteURL: string, username: string, password: string } },
              volumes: strings,
            },
          },
          use: strings,
          config: string,
        },
      },
      hostAliases: { type: 'array', items: { type: 'object', properties: { ip: string, hostnames: strings } } },
    },
  };
})();

/**
 * The SR-IOV network device plugin v3.9.0 (commit c625430be6b09f52965a656553539c20da5f82bc) config.json, the
 * ConfigMap's one key: `ResourceConfList` and `NetDeviceSelectors` in pkg/types/types.go (json tags; IsRdma and
 * NeedVhostNet have none, so Go matches them by name), `selectors` an object or a list of them
 * (pkg/factory/factory.go parseObjectOrSlice). The plugin decodes it leniently (cmd/sriovdp/manager.go
 * readConfig: json.Unmarshal): a misspelt selector is dropped, and the resource takes every VF the others match.
 * Only the net device type is described, the one sriovctl renders.
 */
export const DEVICE_PLUGIN_CONFIG_SCHEMA = (() => {
  const netDeviceSelectors = {
    type: 'object',
    properties: {
      vendors: strings,
      devices: strings,
      drivers: strings,
      pciAddresses: strings,
      pfNames: strings,
      rootDevices: strings,
      linkTypes: strings,
      isRdma: boolean,
      acpiIndexes: strings,
      ddpProfiles: strings,
      needVhostNet: boolean,
      vdpaType: { enum: ['virtio', 'vhost'] },
      pKeys: strings,
    },
  };
  return {
    type: 'object',
    required: ['resourceList'],
    properties: {
      resourceList: {
        type: 'array',
        items: {
          type: 'object',
          required: ['resourceName'],
          properties: {
            resourcePrefix: string,
            resourceName: string,
            deviceType: { const: 'netDevice' },
            excludeTopology: boolean,
            // one schema for both forms (properties bind an object, items a list): no anyOf branch left open
            selectors: { ...netDeviceSelectors, type: ['object', 'array'], minItems: 1, items: netDeviceSelectors },
            additionalInfo: { type: 'object', additionalProperties: stringMap },
          },
        },
      },
    },
  };
})();
