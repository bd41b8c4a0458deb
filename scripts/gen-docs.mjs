// `npm run docs`: writes the command reference and the man pages from the built commander definitions
// (dist/cli/reference.js). test/unit/cli-reference.test.ts fails when the committed files differ from these.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const { REFERENCE_FILES } = require(join(ROOT, 'dist', 'cli', 'reference-files.js'));

for (const [file, make] of Object.entries(REFERENCE_FILES)) {
  const out = join(ROOT, file);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, make());
  console.log(`wrote ${file}`);
}
