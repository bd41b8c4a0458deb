// The packager's cache (downloaded runtimes, the cross-compiled addon): outside the checkout, so fresh clones on
// one machine share it; everything in it is checked (integrity) or keyed by its inputs before use.
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function cacheDir() {
  const dir = process.env.SRIOVCTL_PACKAGE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'sriovctl', 'package');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
