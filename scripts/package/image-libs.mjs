// What a dynamically linked executable needs to start in an image FROM scratch: its ELF interpreter and every
// shared library it names, transitively (Node's official binaries link glibc and libstdc++ dynamically; without
// them the image's entry point fails with "exec /sriovctl: no such file or directory"). Taken from the
// architecture's Debian libraries (this machine's for amd64, g++-aarch64-linux-gnu's for arm64) and placed where
// that interpreter looks by default, since the image has no ld.so.cache.
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';

const LIBS = {
  amd64: { from: ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu'], to: '/lib/x86_64-linux-gnu' },
  arm64: { from: ['/usr/aarch64-linux-gnu/lib'], to: '/lib/aarch64-linux-gnu' },
};

const readelf = (flag, file) => execFileSync('readelf', [flag, '-W', file], { encoding: 'utf8', maxBuffer: 64 << 20 });

/** The files `exe` needs in the image, as { host, image } paths; none for a static executable. */
export function runtimeFiles(exe, arch) {
  const libs = LIBS[arch];
  if (!libs) throw new Error(`no library directories known for ${arch}`);
  const interp = /Requesting program interpreter: ([^\]]+)\]/.exec(readelf('-l', exe))?.[1];
  if (!interp) return [];
  const find = (name) => {
    for (const dir of libs.from) if (existsSync(join(dir, name))) return realpathSync(join(dir, name));
    throw new Error(`${arch}: ${name} (needed by ${basename(exe)}) is in none of ${libs.from.join(', ')}`);
  };
  const files = new Map([[interp, find(basename(interp))]]);
  const seen = new Set([basename(interp)]);
  const queue = [exe];
  while (queue.length) {
    for (const [, lib] of readelf('-d', queue.shift()).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)) {
      if (seen.has(lib)) continue;
      seen.add(lib);
      const host = find(lib);
      files.set(join(libs.to, lib), host);
      queue.push(host);
    }
  }
  return [...files].map(([image, host]) => ({ host, image }));
}
