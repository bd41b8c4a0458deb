// Where the compiled addon comes from when sriovctl runs from its package (npm, a checkout): the node-gyp build
// beside dist/. The self-contained executable swaps this module for src/sea/addon-file.ts (scripts/package), which
// loads the copy embedded in the executable instead.
import { join } from 'node:path';

export function loadAddonModule(): unknown {
  // src/addon-file.ts and dist/addon-file.js (and the bundles in dist/) all sit one level below the root
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a .node file loads only through require
  return require(join(__dirname, '..', 'build', 'Release', 'sriovctl.node'));
}
