// One single executable application per architecture (Node's SEA): the runtime's node binary with a blob
// injected (postject) that holds the entry script (src/sea/main.ts) with its V8 code cache, and as assets the
// two program bundles, the daemon's search worker's, the addon, the payload install-cni writes beside the plugin (src/package/payload-layout.ts:
// the static launcher and the runtime's C library, so the plugin runs on nodes without glibc), and the static
// native shim install-cni installs as the plugin itself (scripts/package/shim.mjs). The blob is made
// by the *target* runtime itself (`node --experimental-sea-config`), arm64 under qemu-user: a code cache only fits
// the V8 build that made it.
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { cacheDir } from './cache.mjs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { NODE_VERSION, runtimeDir } from './runtimes.mjs';
import { runUnder } from './run-under.mjs';
import { cRuntimeFiles } from './c-runtime.mjs';
import { buildLauncher } from './launcher.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;

/** In the executable, the addon comes from the embedded copy (src/sea/addon-file.ts), not from build/. */
const embeddedAddon = {
  name: 'embedded-addon',
  setup(b) {
    b.onResolve({ filter: /\/addon-file$/ }, (args) =>
      args.importer.startsWith(join(ROOT, 'src', 'sea')) ? undefined : { path: join(ROOT, 'src', 'sea', 'addon-file.ts') },
    );
  },
};

async function bundle(entry, outfile, define) {
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    legalComments: 'none',
    logLevel: 'warning',
    define,
    plugins: [embeddedAddon],
  });
}

/** Builds `out` (the executable of `arch`) from the addon at `addon` and the shim at `shim`, using `work` for the intermediate files. */
export async function buildExecutable(arch, addon, shim, work, version, out) {
  const addonSha = createHash('sha256').update(readFileSync(addon)).digest('hex');
  const define = { SRIOVCTL_VERSION: JSON.stringify(version), SRIOVCTL_ADDON_SHA256: JSON.stringify(addonSha) };
  const files = {
    main: join(work, 'main.js'),
    cniRun: join(work, 'sriovctl-cni-run.js'),
    cli: join(work, 'sriovctl-cli.js'),
    searchWorker: join(work, 'namespace-search-worker.js'),
  };
  await Promise.all([
    bundle('src/sea/main.ts', files.main, define),
    bundle('src/cni/run.ts', files.cniRun, define),
    bundle('src/cli/main.ts', files.cli, define),
    bundle('src/lend/namespace-search-worker.ts', files.searchWorker, define),
  ]);
  const payload = payloadFiles(arch, work);
  // the same inputs make the same executable: reuse the last one (blob + injection take ~10 s per arch)
  const key = createHash('sha256').update(`${arch}\0${NODE_VERSION}\0${addonSha}\0`);
  for (const f of [files.main, files.cniRun, files.cli, files.searchWorker, shim, join(ROOT, 'scripts', 'package', 'sea.mjs')]) key.update(readFileSync(f)).update('\0');
  for (const [path, source] of Object.entries(payload)) key.update(`${path}\0`).update(readFileSync(source)).update('\0');
  const cached = join(cacheDir(), `sriovctl-linux-${arch}-${key.digest('hex').slice(0, 24)}`);
  if (!existsSync(cached)) await makeExecutable(arch, addon, shim, files, payload, work, cached);
  copyFileSync(cached, out);
  chmodSync(out, 0o755);
}

/** { path in the payload: source file }: the launcher, built now, and the C runtime (the loader first). */
function payloadFiles(arch, work) {
  const launcher = join(work, 'oneshot');
  buildLauncher(arch, launcher);
  return { oneshot: launcher, ...Object.fromEntries(cRuntimeFiles(arch).map((f) => [`lib/${f.name}`, f.source])) };
}

async function makeExecutable(arch, addon, shim, files, payload, work, out) {
  const blob = join(work, 'sea.blob');
  const config = join(work, 'sea-config.json');
  const manifest = join(work, 'payload.json');
  writeFileSync(manifest, JSON.stringify({ files: Object.keys(payload) }));
  writeFileSync(
    config,
    JSON.stringify({
      main: files.main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      // a start-up snapshot (the CNI plugin and its verbs evaluated at build time, the addon loaded on first use)
      // was measured against this: no gain. Node 20 drops the code cache when it builds one, so the verbs' functions,
      // which never run at build time, compile on every call, and the larger heap costs VERSION 3-5 ms of CPU
      useSnapshot: false,
      // the keys are src/sea/build-info.ts's ASSET
      assets: {
        'sriovctl.node': addon,
        'sriovctl-cni-run.js': files.cniRun,
        'sriovctl-cli.js': files.cli,
        // the daemon runs its namespace searches on a worker thread from this text (no file beside it here)
        'namespace-search-worker.js': files.searchWorker,
        'payload.json': manifest,
        'sriovctl-cni-shim': shim,
        ...Object.fromEntries(Object.entries(payload).map(([path, source]) => [`payload/${path}`, source])),
      },
    }),
  );
  const node = join(runtimeDir(arch), 'bin', 'node');
  await runUnder(arch, node, ['--experimental-sea-config', config]);
  const tmp = `${out}.tmp-${process.pid}`;
  copyFileSync(node, tmp);
  chmodSync(tmp, 0o755);
  try {
    await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'package', 'inject.mjs'), tmp, blob], { maxBuffer: 64 << 20 });
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new Error(`postject failed for ${arch}: ${err.stderr || err.message}`);
  }
  // one cached executable per architecture: older builds are dead weight (100 MB each)
  for (const f of readdirSync(cacheDir())) if (f.startsWith(`sriovctl-linux-${arch}-`) && join(cacheDir(), f) !== tmp) rmSync(join(cacheDir(), f), { force: true });
  renameSync(tmp, out);
}
