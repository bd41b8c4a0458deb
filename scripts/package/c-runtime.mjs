// The C runtime each architecture's Node links (Node's official binaries are dynamic): the ELF interpreter and
// every library in its DT_NEEDED (readelf), taken from this machine (amd64, Debian's libc6 / libstdc++6 /
// libgcc-s1) and from the cross toolchain's target libraries (arm64, Debian's *-arm64-cross). The installer image
// puts them where the loader looks; the executable carries them for the private glibc install-cni writes beside
// the plugin (the payload, src/package/payload-layout.ts), so the plugin runs on a node without glibc.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { checkGlibc } from './glibc-version.mjs';
import { runtimeDir } from './runtimes.mjs';

/** Where each architecture's glibc comes from here, and where its loader looks for it on a glibc system. */
const C_RUNTIME = {
  amd64: { from: '/lib/x86_64-linux-gnu', to: '/lib/x86_64-linux-gnu' },
  arm64: { from: '/usr/aarch64-linux-gnu/lib', to: '/lib/aarch64-linux-gnu' },
};

/**
 * The loader first, then the libraries: { name (the soname), source (a file here, symlinks followed by readers),
 * systemPath (where a glibc system has it: the interpreter path for the loader) }.
 */
export function cRuntimeFiles(arch) {
  const node = join(runtimeDir(arch), 'bin', 'node');
  const headers = execFileSync('readelf', ['-d', '-l', node], { encoding: 'utf8' });
  const interp = /Requesting program interpreter: (\S+)\]/.exec(headers)[1];
  const needed = [...headers.matchAll(/\(NEEDED\)\s+Shared library: \[(\S+)\]/g)].map((m) => m[1]);
  const { from, to } = C_RUNTIME[arch];
  const loaderName = interp.split('/').pop();
  const files = [{ name: loaderName, source: join(from, loaderName), systemPath: interp }];
  for (const lib of needed) if (lib !== loaderName) files.push({ name: lib, source: join(from, lib), systemPath: join(to, lib) });
  // the launcher's `ld.so --argv0` needs glibc >= 2.33: refuse to ship an older one (./glibc-version.mjs)
  checkGlibc(files.filter((f) => f.name === loaderName || f.name === 'libc.so.6').map((f) => f.source));
  return files;
}
