import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The CNI suite runs twice: one-shot (project `host`, with everything else) and through the native shim and
// `sriovctl daemon` (project `cni-shim`: test/helpers/cni-run.ts switches on SRIOVCTL_TEST_CNI_TRANSPORT).
const DAEMON_SOCKET = join(tmpdir(), `sriovctl-test-daemon-${process.pid}`, 'cni.sock');

/** The files that plant hostile neighbours (see the 'neighbour' project). */
const NEIGHBOUR_FILES = ['test/integration/hostile-input.test.ts', 'test/integration/lend-hostile-neighbour.test.ts'];

export default defineConfig({
  test: {
    // Integration tests touch the real kernel: forks keep each file's native handles in its own process.
    pool: 'forks',
    // Three files at once on two cores (Vitest's default is cores - 1: one file at a time here). The integration
    // files spend most of their time waiting on the kernel (each netns move waits out an RCU grace period) and on
    // child processes, and every one of them names its namespaces and links with a prefix of its own: run one at
    // a time, the host tier took 455 s; three at a time, 267 s, with the same 1175 tests passing.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'host',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: NEIGHBOUR_FILES,
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        // After every other file: these plant a hostile neighbour (a user namespace with a huge /run/netns of its
        // own) that every other test's namespace search would rightly meet and warn about
        extends: true,
        test: {
          name: 'neighbour',
          include: NEIGHBOUR_FILES,
          globalSetup: ['test/helpers/global-setup.ts'],
          sequence: { groupOrder: 1 },
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
