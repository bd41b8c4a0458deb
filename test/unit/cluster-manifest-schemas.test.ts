// Every object `cluster up` applies, validated against the Kubernetes API's own schemas for the version the
// clusters run (src/cluster/kubernetes-version.ts): kubernetes-models 4.5.1 carries validators generated from
// Kubernetes 1.33's OpenAPI (types, required fields, enums, formats such as quantities). The
// NetworkAttachmentDefinition is validated against the CRD's openAPIV3Schema as rendered (the one Multus v4.1.4
// publishes in deployments/multus-daemonset.yml), as the API server does for a custom resource.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, ServiceAccount } from 'kubernetes-models/v1';
import { renderManifests, toYaml, type ManifestInput } from '../../src/cluster/manifests';

type K8sObject = Record<string, any>;

/** The kubernetes-models class of each built-in kind the manifests use. */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apiextensions.k8s.io/v1 CustomResourceDefinition': CustomResourceDefinition,
  'apps/v1 DaemonSet': DaemonSet,
  'rbac.authorization.k8s.io/v1 ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding': ClusterRoleBinding,
  'v1 ConfigMap': ConfigMap,
  'v1 ServiceAccount': ServiceAccount,
};

/** Problems of one object ([] when valid); `crds` are the CustomResourceDefinitions applied with it. */
function problems(obj: K8sObject, crds: K8sObject[]): string[] {
  const key = `${obj.apiVersion} ${obj.kind}`;
  const Model = MODELS[key];
  if (Model) {
    try {
      new Model(obj).validate();
      return [];
    } catch (err) {
      return [`${key} ${obj.metadata?.name}: ${(err as Error).message}`];
    }
  }
  const [group, version] = String(obj.apiVersion).split('/');
  const crd = crds.find((c) => c.spec.group === group && c.spec.names.kind === obj.kind);
  const served = crd?.spec.versions.find((v: any) => v.name === version && v.served);
  if (!served) return [`${key}: neither a built-in kind nor one of the CRDs applied`];
  const validate = new Ajv({ strict: false, allErrors: true }).compile(served.schema.openAPIV3Schema);
  const name = obj.metadata?.name;
  return validate(obj) ? [] : [`${key} ${name}: ${new Ajv().errorsText(validate.errors)}`];
}

/** The objects as kubectl reads them: the YAML text written to the files, parsed back. */
function applied(input: ManifestInput): K8sObject[] {
  return renderManifests(input).flatMap((f) => parseAllDocuments(toYaml(f) as string) as any[]).map((d) => d.toJS());
}

function allProblems(objects: K8sObject[]): string[] {
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  return objects.flatMap((o) => problems(o, crds));
}

const K3D_CNI = { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' };
const INPUTS: [string, ManifestInput][] = [
  ['k3d, any driver', { pfNames: ['enp3s0f0'], driver: null, cni: K3D_CNI }],
  ['kind, vfio-pci, two PFs', { pfNames: ['enp3s0f0', 'ens1f1'], driver: 'vfio-pci', cni: K3D_CNI }],
  ['a kernel VF driver, sriov-cni\'s name', { pfNames: ['eth2'], driver: 'iavf', cni: K3D_CNI, sriovCniName: 'sriov' }],
  [
    'other CNI dirs, arm64 and amd64 images by digest, another network and IPAM',
    {
      pfNames: ['enP2p1s0f0'],
      driver: 'mlx5_core',
      cni: { binDir: '/usr/libexec/cni', confDir: '/etc/kubernetes/cni/net.d' },
      images: { cniInstaller: `registry.local:5000/sriovctl/sriovctl-cni@sha256:${'a'.repeat(64)}` },
      network: { name: 'fast', namespace: 'vms' },
      ipam: { type: 'static', addresses: [{ address: '10.10.0.2/24' }] },
    },
  ],
];

describe('rendered manifests against the Kubernetes 1.33 API schemas', () => {
  for (const [what, input] of INPUTS) {
    it(`every object is valid: ${what}`, () => {
      const objects = applied(input);
      expect(objects.map((o) => o.kind).sort()).toEqual([
        'ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'CustomResourceDefinition', 'DaemonSet', 'DaemonSet', 'DaemonSet',
        'NetworkAttachmentDefinition', 'ServiceAccount', 'ServiceAccount',
      ]);
      expect(allProblems(objects)).toEqual([]);
    });
  }

  // the validation can fail: each broken copy is refused, naming the field
  const breakages: [string, (objects: K8sObject[]) => void, RegExp][] = [
    ['a quantity that is not one', (o) => (daemonSet(o, 'kube-multus-ds').spec.template.spec.containers[0].resources.limits.cpu = 'lots'), /DaemonSet kube-multus-ds: .*resources\/limits\/cpu must match format "quantity"/],
    ['a volume mount without its path', (o) => delete daemonSet(o, 'sriovctl-cni-installer').spec.template.spec.initContainers[0].volumeMounts[0].mountPath, /initContainers\/0\/volumeMounts\/0 must have required property mountPath/],
    ['args that are not strings', (o) => (daemonSet(o, 'kube-sriov-device-plugin').spec.template.spec.containers[0].args = [10]), /containers\/0\/args\/0 must be string/],
    ['a DaemonSet without a selector', (o) => delete daemonSet(o, 'kube-multus-ds').spec.selector, /spec must have required property selector/],
    ['ConfigMap data that is not a string', (o) => (o.find((x) => x.kind === 'ConfigMap')!.data['config.json'] = { resourceList: [] }), /ConfigMap sriovdp-config: data\/data\/config.json must be string/],
    ['an attachment whose config is an object', (o) => (o.find((x) => x.kind === 'NetworkAttachmentDefinition')!.spec.config = { type: 'sriov' }), /NetworkAttachmentDefinition sriov-net: data\/spec\/config must be string/],
    ['a kind nobody defines', (o) => (o.find((x) => x.kind === 'NetworkAttachmentDefinition')!.kind = 'NetworkAttachment'), /NetworkAttachment: neither a built-in kind nor one of the CRDs applied/],
  ];
  for (const [what, breakIt, message] of breakages) {
    it(`refuses ${what}`, () => {
      const objects = applied(INPUTS[0][1]);
      breakIt(objects);
      const found = allProblems(objects);
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(message);
    });
  }
});

function daemonSet(objects: K8sObject[], name: string): K8sObject {
  return objects.find((o) => o.kind === 'DaemonSet' && o.metadata.name === name)!;
}
