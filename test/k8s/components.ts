// The tier's Kubernetes components, built from their pinned Go modules by scripts/ensure-k8s.sh (a cached build is
// only looked up): the directory of each component's commands.
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const REPO = resolve(__dirname, '..', '..');

export interface ComponentBins {
  kubelet: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  etcd: string;
  multus: string;
  /** Multus thick: the daemon (run in its DaemonSet's pod) and the shim the runtime calls. */
  multusDaemon: string;
  multusShim: string;
  crictl: string;
}

export function componentBins(): ComponentBins {
  const out = execFileSync('bash', [join(REPO, 'scripts', 'ensure-k8s.sh'), 'kubernetes', 'etcd', 'multus', 'cri-tools'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const dirs = new Map(
    out
      .trim()
      .split('\n')
      .map((l) => l.split(' ') as [string, string]),
  );
  const dir = (name: string) => {
    const d = dirs.get(name);
    if (!d) throw new Error(`ensure-k8s.sh named no directory for ${name}: ${out}`);
    return d;
  };
  return {
    kubelet: join(dir('kubernetes'), 'kubelet'),
    kubeApiserver: join(dir('kubernetes'), 'kube-apiserver'),
    kubeControllerManager: join(dir('kubernetes'), 'kube-controller-manager'),
    kubeScheduler: join(dir('kubernetes'), 'kube-scheduler'),
    // go build names a module's root package after the module path's last element that is not a major version
    etcd: join(dir('etcd'), 'server'),
    multus: join(dir('multus'), 'multus'),
    multusDaemon: join(dir('multus'), 'multus-daemon'),
    multusShim: join(dir('multus'), 'multus-shim'),
    crictl: join(dir('cri-tools'), 'crictl'),
  };
}
