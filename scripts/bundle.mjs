// Bundles the CNI plugin and the CLI: each is a fresh process per call, so start-up cost is dominated by how many
// modules Node must resolve and compile. Two files: the entry (src/cni/main.ts: VERSION and a loader, a few
// KB) and the rest (src/cni/run.ts: the protocol and the verbs), which the entry loads — through a V8 code
// cache — only for verbs that need it. The native addon is not bundled: src/native.ts requires it by a path
// relative to dist/ (../build/Release/sriovctl.node).
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: false,
  legalComments: 'none',
  logLevel: 'warning',
};

/** The entry must not pull ./run into itself: it is the other bundle, loaded at run time. */
const runIsTheOtherBundle = {
  name: 'run-is-the-other-bundle',
  setup(b) {
    b.onResolve({ filter: /^\.\/run$/ }, (args) =>
      args.importer.endsWith('src/cni/main.ts') ? { path: './sriovctl-cni-run.bundle.js', external: true } : undefined,
    );
  },
};

await build({ ...common, entryPoints: ['src/cni/main.ts'], outfile: 'dist/sriovctl-cni.bundle.js', plugins: [runIsTheOtherBundle] });
await build({ ...common, entryPoints: ['src/cni/run.ts'], outfile: 'dist/sriovctl-cni-run.bundle.js' });

// The CLI the same way: a small entry (src/cli/entry.ts) and the CLI itself, loaded through a code cache.
const mainIsTheOtherBundle = {
  name: 'main-is-the-other-bundle',
  setup(b) {
    b.onResolve({ filter: /^\.\/main$/ }, (args) =>
      args.importer.endsWith('src/cli/entry.ts') ? { path: './sriovctl-run.bundle.js', external: true } : undefined,
    );
  },
};
await build({ ...common, entryPoints: ['src/cli/entry.ts'], outfile: 'dist/sriovctl.bundle.js', plugins: [mainIsTheOtherBundle] });
await build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/sriovctl-run.bundle.js' });

// The daemon's namespace search runs on a worker thread (src/lend/namespace-search-thread.ts): its own small bundle.
await build({ ...common, entryPoints: ['src/lend/namespace-search-worker.ts'], outfile: 'dist/namespace-search-worker.bundle.js' });
