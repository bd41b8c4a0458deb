// The KubeletConfiguration both of the tier's nodes run: the host-namespace node (./cluster.ts) and the kind-style
// node in a container (./kind-node.ts). Fixed by these machines: cgroup v1 hybrid and a PID 1 that is not systemd
// (cgroupfs driver, failCgroupV1 off), a host firewall that is not the node's, and a shared machine's disk and
// memory that are not the node's to guard.
import type { Pki } from './pki';

export interface KubeletConfigInput {
  /** Where kubelet serves (its port: `port`, else kubelet's default). */
  address: string;
  port?: number;
  pki: Pki;
  cgroupRoot: string;
  /** containerd's socket. */
  runtimeSocket: string;
  podLogsDir: string;
  volumePluginDir: string;
}

export function kubeletConfiguration(i: KubeletConfigInput): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: i.address,
    ...(i.port === undefined ? {} : { port: i.port }),
    readOnlyPort: 0,
    healthzPort: 0,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: i.pki.ca.cert } },
    authorization: { mode: 'AlwaysAllow' },
    tlsCertFile: i.pki.kubeletServing.cert,
    tlsPrivateKeyFile: i.pki.kubeletServing.key,
    // these machines: cgroup v1 hybrid, PID 1 not systemd
    cgroupDriver: 'cgroupfs',
    cgroupRoot: i.cgroupRoot,
    failCgroupV1: false,
    failSwapOn: false,
    // the host's firewall is not this node's: no KUBE-FIREWALL, hint or canary chains
    makeIPTablesUtilChains: false,
    containerRuntimeEndpoint: `unix://${i.runtimeSocket}`,
    podLogsDir: i.podLogsDir,
    volumePluginDir: i.volumePluginDir,
    // a shared machine's disk and memory are not this node's to guard
    evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
  };
}
