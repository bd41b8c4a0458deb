import { defineConfig } from 'vitest/config';

// The Kubernetes tier: a one-node cluster per test file (etcd, kube-apiserver, controller manager, scheduler,
// kubelet, containerd, Multus; built by scripts/ensure-k8s.sh) with sriovctl installed by its image and DaemonSet.
// The installer DaemonSet uses the host's default sriovctl paths, as on a node: the files run one at a time.
export default defineConfig({
  test: {
    pool: 'forks',
    fileParallelism: false,
    include: ['test/k8s/**/*.test.ts'],
    // a cluster starts in about a minute on an idle machine; a loaded one takes several
    testTimeout: 600_000,
    hookTimeout: 600_000,
    globalSetup: ['test/helpers/global-setup.ts', 'test/field/global-setup.ts'],
    reporters: ['default'],
  },
});
