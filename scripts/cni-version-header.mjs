// native/cni_version.h: what the C front ends of the plugin (the shim, native/shim/sriovctl_cni.cc, and the static
// launcher, native/launcher/oneshot.c) answer themselves, without starting Node — CNI VERSION (stdout) and a run by
// hand without CNI_COMMAND (stderr) — made from the TypeScript that answers them (src/cni/versions.ts, compiled to
// dist/ by `npm run build`, which runs this after tsc), so the two cannot drift. The header is checked in (the shim
// is compiled by `npm ci` before anything is built); test/unit/cni-version-header.test.ts fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HEADER = join(ROOT, 'native', 'cni_version.h');

/** The header for a VERSION reply (as versionReply() gives it) and the plugin's text for a person (aboutPlugin()). */
export function headerText(reply, about) {
  // JSON's string escapes of ASCII text (\" \\ \n) are C's
  const literal = (text) => {
    if (!/^[\x20-\x7e\n]*$/.test(text)) throw new Error(`not printable ASCII: ${JSON.stringify(text)}`);
    return JSON.stringify(text);
  };
  return [
    '// Made by scripts/cni-version-header.mjs from src/cni/versions.ts (npm run build): do not edit.',
    '#ifndef SRIOVCTL_CNI_VERSION_H',
    '#define SRIOVCTL_CNI_VERSION_H',
    '',
    '// CNI VERSION: stdout, whatever stdin holds (src/cni/stdio.ts writeStdout(versionReply())), exit 0.',
    `#define SRIOVCTL_CNI_VERSION_REPLY ${literal(JSON.stringify(reply) + '\n')}`,
    '// No CNI_COMMAND (a person ran it: --version, --help, bare): stderr (aboutPlugin()), exit 0.',
    `#define SRIOVCTL_CNI_ABOUT ${literal(about)}`,
    '',
    '#endif',
    '',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const versions = createRequire(import.meta.url)(join(ROOT, 'dist', 'cni', 'versions.js'));
  const text = headerText(versions.versionReply(), versions.aboutPlugin());
  let old = null;
  try {
    old = readFileSync(HEADER, 'utf8');
  } catch {
    // first run
  }
  // written only when it changed: a newer header makes node-gyp and the packaging rebuild the shim
  if (old !== text) writeFileSync(HEADER, text);
}
