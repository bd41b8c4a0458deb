// The components that make VFs allocatable and attachable, rendered as plain Kubernetes objects:
// Multus (thin plugin), the SR-IOV network device plugin and its config, an installer that puts sriovctl-cni on
// every node, and a NetworkAttachmentDefinition that uses it. Every DaemonSet runs on amd64 and arm64 alike.
// Each container calls only what its image carries (./component-images.ts); every object is valid for the
// Kubernetes API we pin (test/unit/cluster-manifest-schemas.test.ts).
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEFAULT_SOCKET } from '../../config';
import { INSTALLER_CNI_BIN } from '../../install/installer-image';
import { PLUGIN_NAME } from '../../install/installed-names';
import { DEFAULT_IMAGES, type ComponentImages } from './component-images';
import { NODE_STATE_DIR } from './node-ledger';
import { yaml } from './yaml';
import { makeDirs } from '../../util/make-dirs';

export const RESOURCE_PREFIX = 'kubevirt.io';
export const RESOURCE_NAME = 'sriov_net';
/** The extended resource the device plugin advertises: `kubevirt.io/sriov_net`. */
export const SRIOV_RESOURCE = `${RESOURCE_PREFIX}/${RESOURCE_NAME}`;
export const NAD_CRD = 'network-attachment-definitions.k8s.cni.cncf.io';
export const SRIOV_NODE_LABEL = 'sriov_capable';
/** Where every component runs. */
export const SYSTEM_NS = 'kube-system';

/** The component DaemonSets and the label (`app=<value>`) their pods carry: what `up` waits for. */
export const COMPONENTS = [
  { daemonSet: 'kube-multus-ds', app: 'multus' },
  { daemonSet: 'kube-sriov-device-plugin', app: 'sriovdp' },
  { daemonSet: 'sriovctl-cni-installer', app: 'sriovctl-cni-installer' },
] as const;

/** The installer image's one executable (scripts/package/image.mjs). */
const IMAGE_EXECUTABLE = '/sriovctl';
/** host-local's default dataDir: its leases, which the daemon's IPAM calls share with the one-shot plugin's. */
const HOST_LOCAL_DATA_DIR = '/var/lib/cni/networks';

/** The executables of the Multus image the DaemonSet runs (./component-images.ts records them). */
const MULTUS = { install: '/install_multus', thinEntrypoint: '/thin_entrypoint' } as const;

export interface ManifestInput {
  /** PF names as the nodes see them (the device plugin's `pfNames`). */
  pfNames: string[];
  /** The VF driver the device plugin selects; null = any. */
  driver: string | null;
  cni: { binDir: string; confDir: string };
  images?: Partial<ComponentImages>;
  /**
   * A second name sriovctl-cni is installed under and the attachment uses (e.g. `sriov`, sriov-cni's), so
   * NetworkAttachmentDefinitions written for sriov-cni work unchanged; null = only `sriovctl-cni`.
   */
  sriovCniName?: string | null;
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
        { apiGroups: [''], resources: ['pods', 'pods/status'], verbs: ['get', 'update'] },
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
      terminationGracePeriodSeconds: 10,
      initContainers: [
        {
          // the image is distroless (no shell, no cp): its own installer copies the thin plugin, atomically
          name: 'install-multus-binary',
          image,
          command: [MULTUS.install],
          args: ['--type', 'thin', '--dest-dir', '/host/opt/cni/bin'],
          resources: { requests: { cpu: '10m', memory: '15Mi' } },
          securityContext: { privileged: true },
          terminationMessagePolicy: 'FallbackToLogsOnError',
          volumeMounts: [{ name: 'cnibin', mountPath: '/host/opt/cni/bin' }],
        },
      ],
      containers: [
        {
          name: 'kube-multus',
          image,
          command: [MULTUS.thinEntrypoint],
          args: [
            '--multus-conf-file=auto',
            '--multus-autoconfig-dir=/host/etc/cni/net.d',
            '--cni-conf-dir=/host/etc/cni/net.d',
            '--cni-bin-dir=/host/opt/cni/bin',
            // the kubeconfig it writes, as the node's kubelet (and so the multus binary) sees it
            `--multus-kubeconfig-file-host=${input.cni.confDir}/multus.d/multus.kubeconfig`,
            '--cleanup-config-on-exit=true',
          ],
          resources: { requests: { cpu: '100m', memory: '50Mi' }, limits: { cpu: '100m', memory: '50Mi' } },
          securityContext: { privileged: true },
          terminationMessagePolicy: 'FallbackToLogsOnError',
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
          // the image's entry point (/entrypoint.sh), which reads /etc/pcidp/config.json by default
          args: ['--log-dir=sriovdp', '--log-level=10'],
          securityContext: { privileged: true },
          resources: { requests: { cpu: '250m', memory: '40Mi' }, limits: { cpu: '1', memory: '200Mi' } },
          volumeMounts: [
            { name: 'devicesock', mountPath: '/var/lib/kubelet/device-plugins' },
            // v3.9 registers with kubelet through the plugin watcher's directory (pkg/types SockDir)
            { name: 'plugins-registry', mountPath: '/var/lib/kubelet/plugins_registry' },
            { name: 'log', mountPath: '/var/log' },
            { name: 'config-volume', mountPath: '/etc/pcidp' },
            { name: 'device-info', mountPath: '/var/run/k8s.cni.cncf.io/devinfo/dp' },
          ],
        },
      ],
      volumes: [
        hostPath('devicesock', '/var/lib/kubelet/device-plugins'),
        hostPath('plugins-registry', '/var/lib/kubelet/plugins_registry'),
        hostPath('log', '/var/log'),
        hostPath('device-info', '/var/run/k8s.cni.cncf.io/devinfo/dp', 'DirectoryOrCreate'),
        { name: 'config-volume', configMap: { name: 'sriovdp-config', items: [{ key: 'config.json', path: 'config.json' }] } },
      ],
    }),
  ];
}

/**
 * sriovctl-cni on every node, served there by a resident daemon, the Multus-thick way. The init container installs
 * with the image's own entry point (`sriovctl install-cni --to /host/opt/cni/bin`: atomic, so a kubelet never runs
 * a half-copied plugin; the image has no shell): the static shim as `sriovctl-cni`, the payload with its one-shot
 * launcher beside it. The main container is the same image running `sriovctl daemon` on the node's
 * /run/sriovctl/cni.sock, where the shim hands each CNI call; it is Ready once `sriovctl daemon --probe` gets an
 * answer there. While it is not running (rolled, crashed, evicted), the shim execs the one-shot plugin: DEL always
 * works. The daemon must act as the one-shot plugin would on the host, so it sees what that sees: the node's
 * network (hostNetwork) and processes (hostPID: CNI_NETNS may be /proc/<pid>/ns/net), privileged (it moves NICs
 * and writes sysfs), and at their host paths the ledger (the one-shot plugin's state dir: both lend from one
 * ledger), /sys, the runtime's netns dir (mounted HostToContainer: namespaces created after the pod started must
 * appear in it), the CNI bin dir (the IPAM plugins CNI_PATH names) and host-local's lease dir. A call from the host's
 * mount namespace (kubelet's runtime), or from thick Multus's chroot, is run only when every path it uses is the
 * same file in the container as in the caller's root, else the shim runs it one-shot. The image is imported into
 * the nodes, not pulled.
 */
export function cniInstallerObjects(input: ManifestInput): Record<string, unknown>[] {
  const image = { ...DEFAULT_IMAGES, ...input.images }.cniInstaller;
  const alias = input.sriovCniName ? ['--also-as', input.sriovCniName] : [];
  const base = { image, imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'FallbackToLogsOnError' };
  const hostDirs: { name: string; path: string; type: string; readOnly?: boolean; propagation?: string }[] = [
    { name: 'socket-dir', path: dirname(DEFAULT_SOCKET), type: 'DirectoryOrCreate' },
    // the node's ledger (the host's state dir, mounted there by `cluster up`): the daemon's default state dir and
    // the one-shot plugin's, so neither is configured and the daemon never sends a call back for its state dir
    { name: 'state-dir', path: NODE_STATE_DIR, type: 'DirectoryOrCreate' },
    { name: 'sys', path: '/sys', type: 'Directory' },
    { name: 'netns', path: '/var/run/netns', type: 'DirectoryOrCreate', propagation: 'HostToContainer' },
    { name: 'cni-bin-host', path: input.cni.binDir, type: 'DirectoryOrCreate', readOnly: true },
    { name: 'cni-ipam-data', path: HOST_LOCAL_DATA_DIR, type: 'DirectoryOrCreate' },
    // the log dir a CNI config's logFile may name (the daemon's default): every dir of the daemon's configuration
    // must be the host's, or each call is sent back to the one-shot plugin
    { name: 'log-dir', path: '/var/log', type: 'DirectoryOrCreate' },
  ];
  return [
    daemonSet('sriovctl-cni-installer', 'sriovctl-cni-installer', {
      // it must run before any pod network works (it installs part of it): no sandbox network of its own
      hostNetwork: true,
      hostPID: true,
      initContainers: [
        {
          name: 'install-sriovctl-cni',
          ...base,
          args: alias,
          resources: { requests: { cpu: '1m', memory: '16Mi' } },
          volumeMounts: [{ name: 'cnibin', mountPath: INSTALLER_CNI_BIN }],
        },
      ],
      containers: [
        {
          name: 'sriovctl-daemon',
          ...base,
          command: [IMAGE_EXECUTABLE, 'daemon'],
          // kubelet's calls name the node's CNI bin dir
          env: [{ name: 'SRIOVCTL_DAEMON_CNI_PATH', value: input.cni.binDir }],
          securityContext: { privileged: true },
          resources: { requests: { cpu: '10m', memory: '64Mi' } },
          readinessProbe: { exec: { command: [IMAGE_EXECUTABLE, 'daemon', '--probe'] }, periodSeconds: 10, timeoutSeconds: 5 },
          volumeMounts: hostDirs.map((d) => ({
            name: d.name,
            mountPath: d.path,
            ...(d.readOnly ? { readOnly: true } : {}),
            ...(d.propagation ? { mountPropagation: d.propagation } : {}),
          })),
        },
      ],
      volumes: [hostPath('cnibin', input.cni.binDir, 'DirectoryOrCreate'), ...hostDirs.map((d) => hostPath(d.name, d.path, d.type))],
    }),
  ];
}

/** The CNI network configuration the attachment uses. */
export function networkConfig(input: ManifestInput): Record<string, unknown> {
  const net = input.network ?? { name: 'sriov-net', namespace: 'default' };
  return {
    cniVersion: '1.0.0',
    name: net.name,
    type: input.sriovCniName ?? PLUGIN_NAME,
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
