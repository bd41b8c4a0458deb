// Multus in thick mode, as its upstream DaemonSet (deployments/multus-daemonset-thick.yml of the pinned module) runs
// it: multus-daemon in a hostNetwork, hostPID, privileged pod of a DaemonSet, its configuration a ConfigMap, its
// API access the pod's service account (in-cluster config), the node's root mounted at /hostroot and every delegate
// plugin run chrooted there. The CNI the runtime calls is multus-shim, which forwards each call to the daemon's
// socket. As upstream, the daemon generates the node's CNI conf (00-multus.conf, type multus-shim) from the
// primary network's conf it finds in the conf dir ("multusConfigFile": "auto"): a user-provided conf file instead
// makes v4.3.0's daemon exit at once (with no config manager its main has nothing to wait for). The image is built
// locally FROM scratch (no registry): the static daemon, and the /etc/passwd its cgo-less user lookup reads (it
// refuses to start unless it finds itself root).
//
// Two things differ from upstream, both paths only: the node's CNI dirs, Multus's cache and its socket dir are
// the tier's private dirs (mounted where the daemon expects them, the bin and cache dirs at the node's own paths:
// the daemon looks plugins up in its own mount namespace, then runs them chrooted), and the shim is copied into
// the CNI bin dir by the tier, as the thin plugin is, instead of by an init container (upstream's install_multus
// also wants the passthru plugin, which nothing here uses).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SYSTEM_NS } from '../../src/cluster/kubernetes/manifests';
import { IMAGE_CACHE } from '../field/cri/pause-image';
import { buildScratchImage } from '../field/cri/scratch-image';

export const MULTUS_THICK_APP = 'multus-thick';
const DAEMON_PATH = '/usr/src/multus-cni/bin/multus-daemon';
/** Where the daemon's ConfigMap is mounted (its default --config file's dir). */
const CONFIG_DIR = '/etc/cni/net.d/multus.d';
/** The node's CNI conf dir and Multus's socket dir, as the daemon's container mounts them (upstream's paths). */
const CONF_DIR_IN_POD = '/host/etc/cni/net.d';
/** The host's /run as the daemon's container mounts it: the daemon removes and remakes its socket dir at start, which
 * must therefore not be a mount point itself. */
const RUN_DIR_IN_POD = '/host/run';
const SOCKET_DIR_IN_POD = `${RUN_DIR_IN_POD}/multus`;

/** The daemon's image: its reference and OCI archive, built once per build of the daemon (its cache dir's key). */
export function multusThickImage(daemonBin: string): { ref: string; archive: string } {
  const key = daemonBin.split('/').slice(-2, -1)[0].replace(/^multus-/, '');
  const ref = `localhost/sriovctl-multus-thick:${key}`;
  const archive = join(IMAGE_CACHE, `sriovctl-multus-thick-${key}.oci.tar`);
  if (!existsSync(archive))
    buildScratchImage({ ref, archive, files: [[daemonBin, DAEMON_PATH]], entrypoint: [DAEMON_PATH] }, (work) => {
      const passwd = join(work, 'passwd');
      writeFileSync(passwd, 'root:x:0:0:root:/root:/sbin/nologin\n');
      return [[passwd, '/etc/passwd']];
    });
  return { ref, archive };
}

export interface MultusThickInput {
  image: string;
  /** The node's CNI conf and bin dirs, Multus's delegate cache dir and the run dir its socket dir is made in
   * (`<runDir>/multus`; host paths). */
  confDir: string;
  binDir: string;
  cacheDir: string;
  runDir: string;
  /** The API server as the hostNetwork pod reaches it (there is no kube-proxy for the `kubernetes` service). */
  apiHost: string;
  apiPort: number;
}

/** The daemon's socket dir on the host, under the run dir its pod mounts. */
export function multusSocketDir(runDir: string): string {
  return join(runDir, 'multus');
}

function hostPath(name: string, path: string, type = 'Directory'): Record<string, unknown> {
  return { name, hostPath: { path, type } };
}

/** The objects of Multus thick's upstream deployment, with the paths of MultusThickInput. */
export function multusThickObjects(input: MultusThickInput): Record<string, unknown>[] {
  const name = MULTUS_THICK_APP;
  const labels = { app: name };
  const daemonConfig = {
    chrootDir: '/hostroot',
    cniVersion: '1.0.0',
    logLevel: 'verbose',
    logToStderr: true,
    cniConfigDir: CONF_DIR_IN_POD,
    multusAutoconfigDir: CONF_DIR_IN_POD,
    multusConfigFile: 'auto',
    socketDir: SOCKET_DIR_IN_POD,
    // into the generated conf (and every call's): the paths as the shim, on the node, sees them
    daemonSocketDir: multusSocketDir(input.runDir),
    binDir: input.binDir,
    cniDir: input.cacheDir,
  };
  const sameInPod = (n: string, p: string) => ({ name: n, mountPath: p });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: SYSTEM_NS } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [
        { apiGroups: ['k8s.cni.cncf.io'], resources: ['*'], verbs: ['*'] },
        // the daemon watches the node's pods (an informer): list and watch besides the thin plugin's get/update
        { apiGroups: [''], resources: ['pods', 'pods/status'], verbs: ['get', 'list', 'update', 'watch'] },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: SYSTEM_NS }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: SYSTEM_NS },
      data: { 'daemon-config.json': JSON.stringify(daemonConfig, null, 2) },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name, namespace: SYSTEM_NS, labels },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            hostNetwork: true,
            hostPID: true,
            serviceAccountName: name,
            tolerations: [{ operator: 'Exists' }],
            terminationGracePeriodSeconds: 10,
            containers: [
              {
                name: 'kube-multus',
                image: input.image,
                imagePullPolicy: 'Never',
                command: [DAEMON_PATH],
                securityContext: { privileged: true },
                env: [
                  { name: 'MULTUS_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                  { name: 'KUBERNETES_SERVICE_HOST', value: input.apiHost },
                  { name: 'KUBERNETES_SERVICE_PORT', value: String(input.apiPort) },
                ],
                volumeMounts: [
                  { name: 'cni', mountPath: CONF_DIR_IN_POD },
                  // "multus-daemon expects that cnibin path must be identical between pod and container host"
                  sameInPod('cnibin', input.binDir),
                  sameInPod('cache', input.cacheDir),
                  { name: 'run', mountPath: RUN_DIR_IN_POD },
                  { name: 'netns', mountPath: '/var/run/netns', mountPropagation: 'HostToContainer' },
                  { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
                  { name: 'hostroot', mountPath: '/hostroot', mountPropagation: 'HostToContainer' },
                ],
              },
            ],
            volumes: [
              hostPath('cni', input.confDir),
              hostPath('cnibin', input.binDir),
              hostPath('cache', input.cacheDir, 'DirectoryOrCreate'),
              hostPath('run', input.runDir, 'DirectoryOrCreate'),
              hostPath('netns', '/var/run/netns'),
              hostPath('hostroot', '/'),
              { name: 'config', configMap: { name } },
            ],
          },
        },
      },
    },
  ];
}
