// The native sriovctl-cni shim for each architecture, static (a node's CNI bin dir may have no C library at all:
// k3s's busybox) and stripped: amd64 is the node-gyp build `npm ci` made (rebuilt when its source is newer), arm64
// is compiled with Debian's g++-aarch64-linux-gnu — one C++ file with no dependency, so no node-gyp is needed.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
const SOURCE = join(ROOT, 'native', 'shim', 'sriovctl_cni.cc');
const CROSS = { arm64: 'aarch64-linux-gnu' };
/** binding.gyp's flags for the target sriovctl-cni. */
const FLAGS = ['-std=c++17', '-Wall', '-Wextra', '-Werror', '-O2', '-static'];

/** Writes the stripped static shim of `arch` to `out`. */
export function buildShim(arch, out) {
  if (arch === 'amd64') {
    const built = join(ROOT, 'build', 'Release', 'sriovctl-cni');
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(SOURCE).mtimeMs) {
      execFileSync(join(ROOT, 'node_modules', '.bin', 'node-gyp'), ['build', '--loglevel=warn'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    }
    copyFileSync(built, out);
    execFileSync('strip', [out]);
    return;
  }
  const triple = CROSS[arch];
  if (!triple) throw new Error(`no cross compiler known for ${arch}`);
  execFileSync(`${triple}-g++`, [...FLAGS, '-s', '-o', out, SOURCE], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The systemd unit of `sriovctl daemon`, shipped beside the executables. */
export const DAEMON_UNIT = join(ROOT, 'scripts', 'package', 'sriovctl-daemon.service');
