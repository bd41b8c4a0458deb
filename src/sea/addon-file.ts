// The self-contained executable's src/addon-file.ts: the addon is embedded as an asset, and dlopen needs a file.
// It is written into the cache dir (root's alone, ./cache-dir.ts) under a name holding its hash, and loaded only
// when the file's SHA-256 is the one fixed at build time; an embedded copy that does not match is refused.
// Other builds' copies stay: a process of another version may be about to load its own.
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-file';
import { ADDON_SHA256, ASSET } from './build-info';
import { seaCacheDir } from './cache-dir';
import { seaAsset } from './assets';
import { selfExecutable } from '../package/self-executable';

export function loadAddonModule(): unknown {
  const file = join(seaCacheDir(), `sriovctl-${ADDON_SHA256.slice(0, 32)}.node`);
  if (!holdsExpectedAddon(file)) extractAddon(file);
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file);
  return mod.exports;
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A regular file (not a symlink) of ours with exactly the expected bytes. */
function holdsExpectedAddon(file: string): boolean {
  try {
    const st = lstatSync(file);
    return st.isFile() && st.uid === process.geteuid?.() && sha256(readFileSync(file)) === ADDON_SHA256;
  } catch {
    return false;
  }
}

function extractAddon(file: string): void {
  const data = new Uint8Array(seaAsset(ASSET.addon));
  const actual = sha256(data);
  if (actual !== ADDON_SHA256) {
    throw new Error(
      `the addon embedded in ${selfExecutable() ?? process.execPath} is corrupt (sha256 ${actual}, built as ${ADDON_SHA256}): refusing to load it; reinstall the executable`,
    );
  }
  // no fsync: a torn file after a crash fails the hash check above and is written again
  writeFileAtomic(file, (fd) => void writeSync(fd, data), 0o700, { durable: false });
}
