// The components that make VFs allocatable and attachable, rendered as plain Kubernetes objects:
// Multus (thin plugin), the SR-IOV network device plugin and its config, an installer that puts sriovctl-cni on
// every node, and a NetworkAttachmentDefinition that uses it. Every DaemonSet runs on amd64 and arm64 alike.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { INSTALLER_CNI_BIN, installerImage } from '../install/installer-image';
import { yaml } from './yaml';
import { makeDirs } from '../make-dirs';

export const RESOURCE_PREFIX = 'kubevirt.io';
export const RESOURCE_NAME = 'sriov_net';
/** The extended resource the device plugin advertises: `kubevirt.io/sriov_net`. */
export const SRIOV_RESOURCE = `${RESOURCE_PREFIX}/${RESOURCE_NAME}`;
export const NAD_CRD = 'network-attachment-definitions.k8s.cni.cncf.io';
export const SRIOV_NODE_LABEL = 'sriov_capable';

/** Images of the components; each is a multi-arch manifest list (linux/amd64 and linux/arm64). */
export const DEFAULT_IMAGES = {
  multus: 'ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.4',
  devicePlugin: 'ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0',
  /** `npm run package`'s installer image (the package version): its entry point installs sriovctl-cni. */
  cniInstaller: installerImage(),
  pause: 'registry.k8s.io/pause:3.10',
};

export interface ManifestInput {
  /** PF names as the nodes see them (the device plugin's `pfNames`). */
  pfNames: string[];
  /** The VF driver the device plugin selects; null = any. */
  driver: string | null;
  cni: { binDir: string; confDir: string };
  images?: Partial<typeof DEFAULT_IMAGES>;
  /** The attachment's name and namespace. */
  network?: { name: string; namespace: string };
  /** IPAM of the NetworkAttachmentDefinition (default: host-local on 10.56.0.0/16). */
  ipam?: Record<string, unknown>;
}

export interface ManifestFile {
  /** File name inside the manifests directory; files are applied in this order. */
  file: string;
  objects: Record<string, unknown>[];
}

const SYSTEM_NS = 'kube-system';
const ARCHES = ['amd64', 'arm64'];

/**
 * Linux nodes of either architecture. Expressed as node affinity — never an `amd64` nodeSelector — so an arm64
 * node gets the same components.
 */
function anyArchAffinity(): Record<string, unknown> {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
              { key: 'kubernetes.io/arch', operator: 'In', values: ARCHES },
            ],
          },
        ],
      },
    },
  };
}

/** Node-level components must run on tainted nodes too (the server of a small cluster). */
const TOLERATE_ALL = [{ operator: 'Exists' }];

function hostPath(name: string, path: string, type?: string): Record<string, unknown> {
  return { name, hostPath: type ? { path, type } : { path } };
}

function daemonSet(name: string, app: string, podSpec: Record<string, unknown>): Record<string, unknown> {
  const labels = { app };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: SYSTEM_NS, labels },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: 'RollingUpdate' },
      template: {
        metadata: { labels },
        spec: { affinity: anyArchAffinity(), tolerations: TOLERATE_ALL, ...podSpec },
      },
    },
  };
}

function serviceAccount(name: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: SYSTEM_NS } };
}

export function multusObjects(input: ManifestInput): Record<string, unknown>[] {
  const image = { ...DEFAULT_IMAGES, ...input.images }.multus;
  return [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: NAD_CRD },
      spec: {
        group: 'k8s.cni.cncf.io',
        scope: 'Namespaced',
        names: {
          plural: 'network-attachment-definitions',
          singular: 'network-attachment-definition',
          kind: 'NetworkAttachmentDefinition',
          shortNames: ['net-attach-def'],
        },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  apiVersion: { type: 'string' },
                  kind: { type: 'string' },
                  metadata: { type: 'object' },
                  spec: { type: 'object', properties: { config: { type: 'string' } } },
                },
              },
            },
          },
        ],
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'multus' },
      rules: [
        { apiGroups: ['k8s.cni.cncf.io'], resources: ['*'], verbs: ['*'] },
        { apiGroups: [''], resources: ['pods', 'pods/status'], verbs: ['get', 'list', 'update', 'watch'] },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'multus' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'multus' },
      subjects: [{ kind: 'ServiceAccount', name: 'multus', namespace: SYSTEM_NS }],
    },
    serviceAccount('multus'),
    daemonSet('kube-multus-ds', 'multus', {
      hostNetwork: true,
      serviceAccountName: 'multus',
      initContainers: [
        {
          name: 'install-multus-binary',
          image,
          command: ['cp', '/usr/src/multus-cni/bin/multus', '/host/opt/cni/bin/multus'],
          securityContext: { privileged: true },
          volumeMounts: [{ name: 'cnibin', mountPath: '/host/opt/cni/bin' }],
        },
      ],
      containers: [
        {
          name: 'kube-multus',
          image,
          command: ['/thin_entrypoint'],
          args: [
            '--multus-conf-file=auto',
            '--multus-autoconfig-dir=/host/etc/cni/net.d',
            '--cni-conf-dir=/host/etc/cni/net.d',
            '--cleanup-config-on-exit=true',
          ],
          resources: { requests: { cpu: '100m', memory: '50Mi' }, limits: { cpu: '100m', memory: '50Mi' } },
          securityContext: { privileged: true },
          volumeMounts: [
            { name: 'cni', mountPath: '/host/etc/cni/net.d' },
            { name: 'cnibin', mountPath: '/host/opt/cni/bin' },
          ],
        },
      ],
      volumes: [hostPath('cni', input.cni.confDir), hostPath('cnibin', input.cni.binDir)],
    }),
  ];
}

/** The device plugin's config.json: one resource, the VFs of every attached PF (on the driver asked for). */
export function devicePluginConfig(input: ManifestInput): Record<string, unknown> {
  const selectors: Record<string, unknown> = { pfNames: [...input.pfNames] };
  if (input.driver) selectors.drivers = [input.driver];
  return { resourceList: [{ resourcePrefix: RESOURCE_PREFIX, resourceName: RESOURCE_NAME, selectors }] };
}

export function devicePluginObjects(input: ManifestInput): Record<string, unknown>[] {
  const image = { ...DEFAULT_IMAGES, ...input.images }.devicePlugin;
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'sriovdp-config', namespace: SYSTEM_NS },
      data: { 'config.json': JSON.stringify(devicePluginConfig(input), null, 2) },
    },
    serviceAccount('sriov-device-plugin'),
    daemonSet('kube-sriov-device-plugin', 'sriovdp', {
      hostNetwork: true,
      serviceAccountName: 'sriov-device-plugin',
      // only agents whose VFs are ready carry this label
      nodeSelector: { [SRIOV_NODE_LABEL]: 'true' },
      containers: [
        {
          name: 'kube-sriovdp',
          image,
          args: ['--log-dir=sriovdp', '--log-level=10'],
          securityContext: { privileged: true },
          resources: { requests: { cpu: '250m', memory: '40Mi' }, limits: { cpu: '1', memory: '200Mi' } },
          volumeMounts: [
            { name: 'devicesock', mountPath: '/var/lib/kubelet/device-plugins' },
            { name: 'log', mountPath: '/var/log' },
            { name: 'config-volume', mountPath: '/etc/pcidp' },
            { name: 'device-info', mountPath: '/var/run/k8s.cni.cncf.io/devinfo/dp' },
          ],
        },
      ],
      volumes: [
        hostPath('devicesock', '/var/lib/kubelet/device-plugins'),
        hostPath('log', '/var/log'),
        hostPath('device-info', '/var/run/k8s.cni.cncf.io/devinfo/dp', 'DirectoryOrCreate'),
        { name: 'config-volume', configMap: { name: 'sriovdp-config', items: [{ key: 'config.json', path: 'config.json' }] } },
      ],
    }),
  ];
}

/**
 * Installs sriovctl-cni into the CNI bin directory of every node with the image's own entry point (`sriovctl
 * install-cni --to /host/opt/cni/bin`: atomic, so a kubelet never runs a half-copied plugin; the image has no
 * shell), then idles so the DaemonSet stays Ready. The image is imported into the nodes, not pulled.
 */
export function cniInstallerObjects(input: ManifestInput): Record<string, unknown>[] {
  const images = { ...DEFAULT_IMAGES, ...input.images };
  return [
    daemonSet('sriovctl-cni-installer', 'sriovctl-cni-installer', {
      initContainers: [
        {
          name: 'install-sriovctl-cni',
          image: images.cniInstaller,
          imagePullPolicy: 'IfNotPresent',
          volumeMounts: [{ name: 'cnibin', mountPath: INSTALLER_CNI_BIN }],
        },
      ],
      containers: [{ name: 'pause', image: images.pause, resources: { requests: { cpu: '1m', memory: '8Mi' } } }],
      volumes: [hostPath('cnibin', input.cni.binDir, 'DirectoryOrCreate')],
    }),
  ];
}

/** The CNI network configuration the attachment uses. */
export function networkConfig(input: ManifestInput): Record<string, unknown> {
  const net = input.network ?? { name: 'sriov-net', namespace: 'default' };
  return {
    cniVersion: '1.0.0',
    name: net.name,
    type: 'sriovctl-cni',
    ipam: input.ipam ?? { type: 'host-local', subnet: '10.56.0.0/16' },
  };
}

export function networkAttachmentObjects(input: ManifestInput): Record<string, unknown>[] {
  const net = input.network ?? { name: 'sriov-net', namespace: 'default' };
  return [
    {
      apiVersion: 'k8s.cni.cncf.io/v1',
      kind: 'NetworkAttachmentDefinition',
      metadata: {
        name: net.name,
        namespace: net.namespace,
        annotations: { 'k8s.v1.cni.cncf.io/resourceName': SRIOV_RESOURCE },
      },
      spec: { config: JSON.stringify(networkConfig(input)) },
    },
  ];
}

/** Every manifest, in apply order (the NetworkAttachmentDefinition needs Multus's CRD first). */
export function renderManifests(input: ManifestInput): ManifestFile[] {
  return [
    { file: '10-multus.yaml', objects: multusObjects(input) },
    { file: '20-sriov-device-plugin.yaml', objects: devicePluginObjects(input) },
    { file: '30-sriovctl-cni-installer.yaml', objects: cniInstallerObjects(input) },
    { file: '40-network-attachment.yaml', objects: networkAttachmentObjects(input) },
  ];
}

/** Multi-document YAML of one file. */
export function toYaml(file: ManifestFile): string {
  return file.objects.map((o) => yaml().stringify(o, { lineWidth: 0 })).join('---\n');
}

/** Writes every file into `dir`; returns their paths in apply order. */
export async function writeManifests(dir: string, files: ManifestFile[]): Promise<string[]> {
  makeDirs(dir);
  const paths: string[] = [];
  for (const f of files) {
    const p = join(dir, f.file);
    await writeFile(p, toYaml(f));
    paths.push(p);
  }
  return paths;
}
