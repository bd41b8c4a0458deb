import { defineConfig } from 'vitest/config';

// The field tier: the packaged executables (dist/pkg, `npm run package`) and the runtimes that run them on a node
// (qemu-user for arm64, containerd's ctr and CRI). Root, real files, real processes; slower than the host tier,
// so it is its own run (`npm run test:field`, after `npm run package` in .ci/run). The CRI scenarios run twice:
// with the plugin one-shot (project `field`) and the resident way, shim + packaged daemon (project `cri-daemon`).
export default defineConfig({
  test: {
    pool: 'forks',
    // arm64 under qemu-user starts in ~2 s per call on this machine, more when it is busy
    testTimeout: 180_000,
    hookTimeout: 180_000,
    globalSetup: ['test/helpers/global-setup.ts', 'test/field/global-setup.ts'],
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'field', include: ['test/field/**/*.test.ts'] } },
      { extends: true, test: { name: 'cri-daemon', include: ['test/field/cri-*.test.ts'], env: { SRIOVCTL_FIELD_CNI: 'daemon' } } },
    ],
  },
});
