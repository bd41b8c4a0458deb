// The package's own directory, from compiled code, bundles (dist/) and sources alike: the first ancestor with a
// package.json. Files shipped beside the code (bin/, package.json) are found from it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let root: string | null = null;

export function packageRoot(): string {
  if (root) return root;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`no package.json above ${__dirname}`);
  }
}
