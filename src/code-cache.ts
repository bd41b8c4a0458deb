// Loading a bundle with a V8 code cache (the CNI plugin's and the CLI's). Each is a fresh process per call, and compiling
// its ~130 KB bundle is the largest cost above Node's own start-up; V8 can skip it with the bytecode of an
// earlier run. The cache lives in the state directory (root's, 0700), keyed by the bundle file's identity and
// the Node version, so a rebuilt bundle or an upgraded Node never sees a stale one (V8 also rejects a cache
// that does not fit, and we then compile as usual). Written once, at the exit of the first run without one,
// so it holds the functions that run actually compiled. Any failure here only costs the compile.
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import Module from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { makeDirs } from './make-dirs';

export function requireWithCodeCache(file: string, cacheDir: string): unknown {
  const source = readFileSync(file, 'utf8');
  const cacheFile = join(cacheDir, cacheName(file));
  let cached: Buffer | undefined;
  try {
    cached = readFileSync(cacheFile);
  } catch {
    cached = undefined;
  }
  const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new Script(wrapper, { filename: file, cachedData: cached });
  const mod = new Module(file, module);
  mod.filename = file;
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, (id: string) => mod.require(id), mod, file, dirname(file));
  mod.loaded = true;
  if (cached === undefined || script.cachedDataRejected) {
    // V8 may flush the bytecode of functions that ran early (bytecode aging on GC), leaving an exit-time cache
    // nearly empty: keep the load-time one as a floor
    const atLoad = script.createCachedData();
    process.once('exit', () => {
      const atExit = script.createCachedData();
      saveCache(atExit.length >= atLoad.length ? atExit : atLoad, basename(file), cacheDir, cacheFile);
    });
  }
  return mod.exports;
}

function cacheName(file: string): string {
  const st = statSync(file);
  return `${basename(file)}-${process.version}-${process.arch}-${st.ino}-${st.size}-${Math.trunc(st.mtimeMs)}.v8cache`;
}

function saveCache(data: Buffer, bundleName: string, cacheDir: string, cacheFile: string): void {
  try {
    makeDirs(cacheDir, 0o700);
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, cacheFile);
    // caches of earlier builds of the same bundle are dead weight
    for (const f of readdirSync(cacheDir)) {
      if (f.startsWith(`${bundleName}-`) && f.endsWith('.v8cache') && join(cacheDir, f) !== cacheFile) unlinkSync(join(cacheDir, f));
    }
  } catch {
    // no cache: the next run compiles, as this one did
  }
}
