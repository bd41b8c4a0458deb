// The self-contained executable's entry (`npm run package` bundles it as the SEA main script). One file, two
// programs, chosen by the name it was run under — kubelet runs a CNI plugin by its file name: `sriovctl-cni` is
// the CNI plugin, `sriovctl` (or the name npm run package gives it) the CLI. The rest of each program is an
// embedded bundle, loaded through a V8 code cache in the root-only cache dir (./cache-dir.ts).
// Everything past the name check is required where it is used, not imported: a CNI VERSION call loads nothing
// it does not need (the bundler keeps such a require lazy).
import { basename } from 'node:path';
import { ASSET } from './build-info';

const CLI_NAMES = new Set(['sriovctl', 'sriovctl-linux-amd64', 'sriovctl-linux-arm64']);
const CNI_NAME = 'sriovctl-cni';
/** src/sriov/sysfs-writer.ts's SYSFS_WRITER_NAME, spelt here so the entry imports nothing it may not need. */
const SYSFS_WRITER_NAME = 'sriovctl-sysfs-write';

/** `require` of the SEA main script: built-in modules only, which is all the bundles require. */
declare const require: NodeJS.Require;

function loadEmbedded<T>(asset: string, variant?: string): T {
  const { loadWithCodeCache } = require('../package/code-cache') as typeof import('../package/code-cache');
  const { seaAssetText } = require('./assets') as typeof import('./assets');
  const { seaCacheDir } = require('./cache-dir') as typeof import('./cache-dir');
  return loadWithCodeCache({ source: seaAssetText(asset), filename: asset, require, variant }, seaCacheDir()) as T;
}

function start(): void {
  // process.argv0 is the name we were run under (argv[0] is the resolved executable)
  const name = basename(process.argv0);
  if (name === CNI_NAME) {
    const { main: cniMain, codeCacheVariant } = require('../cni/main') as typeof import('../cni/main');
    // a verb is async only where a give-back waits on a driver for a recorded VF count
    const load = () => loadEmbedded<typeof import('../cni/run')>(ASSET.cniRun, codeCacheVariant(process.env));
    void Promise.resolve(cniMain(load)).then((code) => process.exit(code));
    return;
  }
  if (name === SYSFS_WRITER_NAME) {
    // the bounded sysfs writer, run by src/sriov/bounded-write.ts as a child it can abandon
    const { sysfsWriterMain } = require('../sriov/sysfs-writer') as typeof import('../sriov/sysfs-writer');
    process.exit(sysfsWriterMain(process.argv.slice(2)));
  }
  if (!CLI_NAMES.has(name)) {
    process.stderr.write(`sriovctl: run as '${name}': this executable is 'sriovctl' (the CLI) or '${CNI_NAME}' (the CNI plugin); install or link it under one of those names\n`);
    process.exit(2);
  }
  let cli: typeof import('../cli/main');
  try {
    cli = loadEmbedded<typeof import('../cli/main')>(ASSET.cli);
  } catch (err) {
    process.stderr.write(`sriovctl: cannot start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  cli.run();
}

start();
