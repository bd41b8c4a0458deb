// The plugin's static launcher (native/launcher/oneshot.c) for each architecture: gcc -static with this machine's
// toolchain (amd64) or Debian's cross gcc (arm64), stripped. Static, so it needs nothing from a node; it runs the
// executable under the payload's private glibc. ~1 s per build: not cached.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tool } from './toolchain.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
export const LAUNCHER_SOURCE = join(ROOT, 'native', 'launcher', 'oneshot.c');

/** Writes the launcher of `arch` to `out`. */
export function buildLauncher(arch, out) {
  execFileSync(tool(arch, 'gcc'), ['-static', '-Os', '-std=c11', '-D_DEFAULT_SOURCE', '-Wall', '-Wextra', '-Werror', '-o', out, LAUNCHER_SOURCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  execFileSync(tool(arch, 'strip'), [out]);
}
