// What bin/sriovctl.js loads: a few KB that load the bundled CLI (dist/sriovctl-run.bundle.js) through a V8 code
// cache, so a command pays for Node's start-up and little more (see ../package/code-cache.ts). Unbundled (tests, dist/cli),
// the same entry loads ./main directly.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { requireWithCodeCache } from '../package/code-cache';
import { loadConfig } from '../config';

const RUN_BUNDLE = 'sriovctl-run.bundle.js';

export function run(): void {
  const bundle = join(__dirname, RUN_BUNDLE);
  const config = loadConfig(process.env);
  const { stateDir } = config;
  // the cache lives in the state directory, but a read-only command must not create that on a fresh machine
  const cli = !existsSync(bundle)
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- unbundled (tests, dist/cli): the CLI from its sources
    ? (require('./main') as typeof import('./main'))
    : existsSync(stateDir)
      ? (requireWithCodeCache(bundle, join(stateDir, 'cli', 'code-cache')) as typeof import('./main'))
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle, loaded without a cache
      : (require(bundle) as typeof import('./main'));
  cli.run(config);
}
