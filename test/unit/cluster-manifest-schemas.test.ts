// Every object `cluster up` applies, validated against the Kubernetes API's own schemas for the version the
// clusters run (src/cluster/kubernetes/version.ts): kubernetes-models 4.5.1 carries validators generated from
// Kubernetes 1.33's OpenAPI (types, required fields, enums, formats such as quantities). The
// NetworkAttachmentDefinition is validated against the CRD's openAPIV3Schema as rendered (the one Multus v4.1.4
// publishes in deployments/multus-daemonset.yml), as the API server does for a custom resource.
// Strictly, as the API server's strict field validation (kubectl's default --validate=strict): a field no schema
// declares is refused, naming its path, where the API server would refuse it or (non-strict) drop it silently;
// free-form maps stay free (test/helpers/strict-fields.ts derives which is which from the schemas).
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, ServiceAccount } from 'kubernetes-models/v1';
import { renderManifests, toYaml, type ManifestInput } from '../../src/cluster/kubernetes/manifests';
import { ajvProblems, kubernetesProblems, strictSchema, validateObjectMeta } from '../helpers/strict-fields';
import { DEVICE_PLUGIN_CONFIG_SCHEMA } from '../helpers/tool-config-schemas';

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
  const name = obj.metadata?.name;
  const Model = MODELS[key];
  if (Model) return kubernetesProblems(obj, (data) => Model.prototype.validate.call(data)).map((p) => `${key} ${name}: ${p}`);
  const [group, version] = String(obj.apiVersion).split('/');
  const crd = crds.find((c) => c.spec.group === group && c.spec.names.kind === obj.kind);
  const served = crd?.spec.versions.find((v: any) => v.name === version && v.served);
  if (!served) return [`${key}: neither a built-in kind nor one of the CRDs applied`];
  const validate = new Ajv({ strict: false, allErrors: true }).compile(strictSchema(customResourceSchema(served.schema.openAPIV3Schema)));
  const found = validate(obj) ? [] : ajvProblems(validate.errors);
  if (obj.metadata !== undefined) found.push(...kubernetesProblems(obj.metadata, validateObjectMeta, ['metadata']));
  return found.map((p) => `${key} ${name}: ${p}`);
}

/** A custom resource's schema as the API server applies it: apiVersion, kind and metadata are always allowed. */
function customResourceSchema(schema: K8sObject): K8sObject {
  const implicit = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' } };
  return { ...schema, properties: { ...implicit, ...schema.properties } };
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
    // misspelt or misplaced fields, at every depth: the API server would drop each silently (or refuse it, strictly)
    ['a misspelt top-level field', (o) => (o.find((x) => x.kind === 'ConfigMap')!.date = { a: 'b' }), /^v1 ConfigMap sriovdp-config: unknown field "date"$/],
    ['a misspelt metadata field', (o) => (o.find((x) => x.kind === 'ServiceAccount')!.metadata.namspace = 'kube-system'), /^v1 ServiceAccount multus: unknown field "metadata\.namspace"$/],
    ['a misspelt pod field', (o) => (podSpec(o, 'kube-multus-ds').hostNetwrok = true), /^apps\/v1 DaemonSet kube-multus-ds: unknown field "spec\.template\.spec\.hostNetwrok"$/],
    ['a container field in the pod spec', (o) => (podSpec(o, 'sriovctl-cni-installer').imagePullPolicy = 'IfNotPresent'), /: unknown field "spec\.template\.spec\.imagePullPolicy"$/],
    ['volumeMount for volumeMounts', (o) => renameKey(podSpec(o, 'kube-sriov-device-plugin').containers[0], 'volumeMounts', 'volumeMount'), /: unknown field "spec\.template\.spec\.containers\[0\]\.volumeMount"$/],
    ['a misspelt field in an init container', (o) => renameKey(podSpec(o, 'kube-multus-ds').initContainers[0], 'terminationMessagePolicy', 'terminationMessagePolcy'), /: unknown field "spec\.template\.spec\.initContainers\[0\]\.terminationMessagePolcy"$/],
    ['a misspelt probe field, seven levels down', (o) => renameKey(podSpec(o, 'sriovctl-cni-installer').containers[0].readinessProbe.exec, 'command', 'comand'), /: unknown field "spec\.template\.spec\.containers\[0\]\.readinessProbe\.exec\.comand"$/],
    ['a misspelt hostPath field', (o) => (podSpec(o, 'kube-sriov-device-plugin').volumes[0].hostPath.typ = 'Directory'), /: unknown field "spec\.template\.spec\.volumes\[0\]\.hostPath\.typ"$/],
    ['a misspelt affinity field', (o) => renameKey(podSpec(o, 'kube-multus-ds').affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1], 'values', 'value'), /: unknown field "spec\.template\.spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms\[0\]\.matchExpressions\[1\]\.value"$/],
    ['a misspelt pod template label field', (o) => renameKey(daemonSet(o, 'kube-multus-ds').spec.template.metadata, 'labels', 'label'), /: unknown field "spec\.template\.metadata\.label"$/],
    ['a subject field in the wrong case', (o) => renameKey(o.find((x) => x.kind === 'ClusterRoleBinding')!.subjects[0], 'namespace', 'nameSpace'), /ClusterRoleBinding multus: unknown field "subjects\[0\]\.nameSpace"$/],
    ['a misspelt keyword in the CRD\'s own schema', (o) => renameKey(crdSchema(o).properties.spec, 'properties', 'propertis'), /CustomResourceDefinition network-attachment-definitions\.k8s\.cni\.cncf\.io: unknown field "spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.propertis"$/],
    ['a misspelt attachment spec field', (o) => renameKey(o.find((x) => x.kind === 'NetworkAttachmentDefinition')!.spec, 'config', 'confg'), /^k8s\.cni\.cncf\.io\/v1 NetworkAttachmentDefinition sriov-net: unknown field "spec\.confg"$/],
    ['a misspelt custom resource metadata field', (o) => renameKey(o.find((x) => x.kind === 'NetworkAttachmentDefinition')!.metadata, 'annotations', 'anotations'), /NetworkAttachmentDefinition sriov-net: unknown field "metadata\.anotations"$/],
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

  describe("the device plugin's config.json (free ConfigMap data to the API server) against v3.9.0's config, strictly", () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(strictSchema(DEVICE_PLUGIN_CONFIG_SCHEMA));
    const configOf = (objects: K8sObject[]) => JSON.parse(objects.find((o) => o.kind === 'ConfigMap')!.data['config.json']);
    const configProblems = (config: unknown) => (validate(config) ? [] : ajvProblems(validate.errors));

    for (const [what, input] of INPUTS) {
      it(`is valid: ${what}`, () => {
        expect(configProblems(configOf(applied(input)))).toEqual([]);
      });
    }

    it('refuses misspelt fields (the plugin would drop them: a dropped selector widens the resource)', () => {
      const config = configOf(applied(INPUTS[1][1]));
      renameKey(config.resourceList[0].selectors, 'pfNames', 'pfName');
      renameKey(config.resourceList[0].selectors, 'drivers', 'driver');
      config.resourceList[0].resourcename = 'x';
      expect(configProblems(config)).toEqual([
        'unknown field "resourceList[0].resourcename"',
        'unknown field "resourceList[0].selectors.pfName"',
        'unknown field "resourceList[0].selectors.driver"',
      ]);
      config.resourceList[0].selectors = [{ pfNames: ['eth2'], rootDevice: [] }];
      delete config.resourceList[0].resourcename;
      expect(configProblems(config)).toEqual(['unknown field "resourceList[0].selectors[0].rootDevice"']);
    });
  });

  it('names every unknown field of an object, not only the first', () => {
    const objects = applied(INPUTS[0][1]);
    Object.assign(podSpec(objects, 'kube-multus-ds'), { hostNetwrok: true, nodeSelektor: {} });
    podSpec(objects, 'kube-multus-ds').containers[0].args_ = [];
    expect(allProblems(objects)).toEqual([
      'apps/v1 DaemonSet kube-multus-ds: unknown field "spec.template.spec.hostNetwrok"',
      'apps/v1 DaemonSet kube-multus-ds: unknown field "spec.template.spec.nodeSelektor"',
      'apps/v1 DaemonSet kube-multus-ds: unknown field "spec.template.spec.containers[0].args_"',
    ]);
  });

  it('leaves free-form maps free: labels, annotations, ConfigMap data, resource lists, nodeSelector, the attachment config', () => {
    const objects = applied(INPUTS[0][1]);
    const ds = daemonSet(objects, 'kube-sriov-device-plugin');
    ds.metadata.labels['example.com/any-label'] = 'x';
    ds.metadata.annotations = { 'example.com/any-annotation': 'y' };
    podSpec(objects, 'kube-sriov-device-plugin').nodeSelector['example.com/node-kind'] = 'z';
    podSpec(objects, 'kube-sriov-device-plugin').containers[0].resources.limits['kubevirt.io/sriov_net'] = '1';
    objects.find((x) => x.kind === 'ConfigMap')!.data['other.json'] = '{}';
    const nad = objects.find((x) => x.kind === 'NetworkAttachmentDefinition')!;
    nad.metadata.labels = { any: 'label' };
    nad.spec.config = JSON.stringify({ ...JSON.parse(nad.spec.config), anyKey: true });
    // the fields the generator dropped from the compiled validators (description) are still known
    crdSchema(objects).properties.spec.description = 'the attachment';
    expect(allProblems(objects)).toEqual([]);
  });
});

function podSpec(objects: K8sObject[], daemonSetName: string): K8sObject {
  return daemonSet(objects, daemonSetName).spec.template.spec;
}

function crdSchema(objects: K8sObject[]): K8sObject {
  return objects.find((o) => o.kind === 'CustomResourceDefinition')!.spec.versions[0].schema.openAPIV3Schema;
}

/** Renames a key in place (the value moves to the misspelt name). */
function renameKey(obj: K8sObject, from: string, to: string): void {
  obj[to] = obj[from];
  delete obj[from];
}

function daemonSet(objects: K8sObject[], name: string): K8sObject {
  return objects.find((o) => o.kind === 'DaemonSet' && o.metadata.name === name)!;
}
