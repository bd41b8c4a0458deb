// sriovctl-cni: the entry point esbuild bundles into dist/sriovctl-cni.bundle.js.
// Start-up is most of this plugin's cost, so this file (its own small bundle) holds only what VERSION needs;
// every other verb loads the protocol and the verbs (./run, bundled apart as sriovctl-cni-run.bundle.js) —
// with a V8 code cache when it can — and each verb's module (with it the native addon) when it runs.
import { join } from 'node:path';
import { loadConfig, type Config } from '../config';
import { CNI_ERR, CniError, errorObject } from './errors';
import { writeStderr, writeStdout } from './stdio';
import { aboutPlugin, LATEST_VERSION, versionReply } from './versions';

/** Names the bundler gives the two halves (scripts/bundle.mjs). */
export const MAIN_BUNDLE = 'sriovctl-cni.bundle.js';
export const RUN_BUNDLE = 'sriovctl-cni-run.bundle.js';

/** The plugin. `load` gets the protocol and the verbs (the self-contained executable loads its embedded copy). */
export function main(load: (config: Config) => typeof import('./run') = loadRun): number | Promise<number> {
  if (process.env.CNI_COMMAND === 'VERSION') {
    writeStdout(versionReply());
    return 0;
  }
  // run by hand, not by a runtime: only CNI_COMMAND tells the two apart (a runtime always sets it), as in the Go skel
  if (!process.env.CNI_COMMAND) {
    writeStderr(aboutPlugin());
    return 0;
  }
  const config = loadConfig(process.env);
  let run: typeof import('./run')['run'];
  try {
    run = load(config).run;
  } catch (err) {
    // a broken installation (the second bundle missing or unreadable): still one error object on stdout
    writeStdout(errorObject(LATEST_VERSION, new CniError(CNI_ERR.INTERNAL, `cannot load the plugin: ${(err as Error).message}`, '')));
    return 1;
  }
  return run(config, process.env);
}

const VERBS_WITH_A_CACHE: ReadonlySet<string> = new Set(['ADD', 'DEL', 'CHECK', 'STATUS', 'GC']);

/**
 * The code cache a call loads the verbs through: one per verb, so each holds what that verb compiles (a cache made
 * by an ADD has none of DEL's functions); a verb no runtime sends shares one.
 */
export function codeCacheVariant(env: NodeJS.ProcessEnv): string | undefined {
  const verb = env.CNI_COMMAND;
  return verb !== undefined && VERBS_WITH_A_CACHE.has(verb) ? verb : undefined;
}

function loadRun(config: Config): typeof import('./run') {
  // SRIOVCTL_CNI_CODE_CACHE=off: compile every time (to measure what the cache saves, or to rule it out)
  if (__filename.endsWith(MAIN_BUNDLE) && process.env.SRIOVCTL_CNI_CODE_CACHE !== 'off') {
    // required here, not imported: VERSION never pays for loading the code cache's modules (crypto, vm)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { requireWithCodeCache } = require('../package/code-cache') as typeof import('../package/code-cache');
    return requireWithCodeCache(join(__dirname, RUN_BUNDLE), join(config.stateDir, 'cni', 'code-cache'), codeCacheVariant(process.env)) as typeof import('./run');
  }
  // compiled by tsc (dist/cni), run from source, or the cache turned off: a plain lazy require
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./run') as typeof import('./run');
}
