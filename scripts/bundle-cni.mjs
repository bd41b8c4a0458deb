// Bundles the CNI entry point into one file: the plugin is a fresh process per call, so start-up cost is
// dominated by how many modules Node must resolve and compile.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

const entry = 'src/cni/main.ts';
if (existsSync(entry)) {
  await build({
    entryPoints: [entry],
    outfile: 'dist/sriovctl-cni.bundle.js',
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
}
