// Loading a bundle with a V8 code cache (the CNI plugin's and the CLI's). Each is a fresh process per call, and compiling
// its bundle is the largest cost above Node's own start-up; V8 can skip it with the bytecode of an earlier run.
// V8 checks only that a cache fits the source's *length*, so a cache is code we run: it is read only from a
// trusted directory (root's, not writable by anyone else along the whole path: ../fs/secure-dir.ts) and named by a
// hash of the source, the Node version and the architecture, so a rebuilt bundle or an upgraded Node never sees
// a stale one. Written once, at the exit of the first run without one, so it holds the functions that run
// actually compiled — so a bundle whose runs differ (the CNI plugin's verbs) keeps one cache per kind of run
// (`variant`): a DEL never compiles what the first run, an ADD, did not need. Any failure here only costs the compile.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import Module from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { ensureTrustedDir, untrustedReason } from '../fs/secure-dir';
import { readStateFile } from '../fs/state-file';

/** One bundle to load: its source, the file name it reports in stack traces, and how it resolves require(). */
export interface BundleSource {
  source: string;
  filename: string;
  /** Defaults to a Module at `filename` (node_modules resolution beside it). */
  require?: (id: string) => unknown;
  /** What kind of run this is (a CNI verb): each has its own cache, holding what that kind compiles. */
  variant?: string;
}

/** require() of a bundle file, through a code cache in `cacheDir` when that directory is trusted. */
export function requireWithCodeCache(file: string, cacheDir: string, variant?: string): unknown {
  return loadWithCodeCache({ source: readFileSync(file, 'utf8'), filename: file, variant }, cacheDir);
}

/** Runs a CommonJS bundle and returns its exports, through a code cache in `cacheDir` when that is trusted. */
export function loadWithCodeCache(bundle: BundleSource, cacheDir: string): unknown {
  const { source, filename, variant } = bundle;
  const cacheFile = join(cacheDir, cacheName(filename, source, variant));
  const cached = untrustedReason(cacheDir) === null ? readOrUndefined(cacheFile) : undefined;
  const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new Script(wrapper, { filename, cachedData: cached });
  const mod = new Module(filename, module);
  mod.filename = filename;
  const req = bundle.require ?? ((id: string) => mod.require(id));
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, req, mod, filename, dirname(filename));
  mod.loaded = true;
  if (cached === undefined || script.cachedDataRejected) {
    // V8 may flush the bytecode of functions that ran early (bytecode aging on GC), leaving an exit-time cache
    // nearly empty: keep the load-time one as a floor
    const atLoad = script.createCachedData();
    process.once('exit', () => {
      const atExit = script.createCachedData();
      saveCache(atExit.length >= atLoad.length ? atExit : atLoad, cacheStem(filename, variant), cacheDir, cacheFile);
    });
  }
  return mod.exports;
}

/** The cache file's name: the bundle's name (and the variant's), and a hash of what the cache must fit. */
export function cacheName(file: string, source: string, variant?: string): string {
  const key = createHash('sha256').update(source).update(`\0${process.version}\0${process.arch}`).digest('hex').slice(0, KEY_LENGTH);
  return `${cacheStem(file, variant)}-${key}${CACHE_SUFFIX}`;
}

const CACHE_SUFFIX = '.v8cache';
const KEY_LENGTH = 32;

function cacheStem(file: string, variant: string | undefined): string {
  return variant === undefined ? basename(file) : `${basename(file)}.${variant}`;
}

function readOrUndefined(file: string): Buffer | undefined {
  try {
    return readStateFile(file);
  } catch {
    return undefined;
  }
}

function saveCache(data: Buffer, stem: string, cacheDir: string, cacheFile: string): void {
  try {
    ensureTrustedDir(cacheDir);
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, cacheFile);
    // caches of earlier builds of the same bundle (and variant) are dead weight; other variants' are not
    for (const f of readdirSync(cacheDir)) {
      if (isCacheOf(f, stem) && join(cacheDir, f) !== cacheFile) unlinkSync(join(cacheDir, f));
    }
  } catch {
    // no cache: the next run compiles, as this one did
  }
}

/** Whether `name` is a cache file of `stem` (of any build): '<stem>-<key>.v8cache', nothing else. */
function isCacheOf(name: string, stem: string): boolean {
  return name.length === stem.length + 1 + KEY_LENGTH + CACHE_SUFFIX.length && name.startsWith(`${stem}-`) && name.endsWith(CACHE_SUFFIX);
}
