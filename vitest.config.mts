import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The CNI suite runs twice: one-shot (project `host`, with everything else) and through the native shim and
// `sriovctl daemon` (project `cni-shim`: test/helpers/cni-run.ts switches on SRIOVCTL_TEST_CNI_TRANSPORT).
const DAEMON_SOCKET = join(tmpdir(), `sriovctl-test-daemon-${process.pid}`, 'cni.sock');

export default defineConfig({
  test: {
    // Integration tests touch the real kernel: forks keep each file's native handles in its own process.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'host',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'cni-shim',
          include: ['test/integration/cni-*.test.ts'],
          env: { SRIOVCTL_TEST_CNI_TRANSPORT: 'shim', SRIOVCTL_SOCKET: DAEMON_SOCKET },
          globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/daemon-setup.ts'],
        },
      },
    ],
  },
});
