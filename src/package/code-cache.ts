// Loading a bundle with a V8 code cache (the CNI plugin's and the CLI's). Each is a fresh process per call, and compiling
// its bundle is the largest cost above Node's own start-up; V8 can skip it with the bytecode of an earlier run.
// V8 checks only that a cache fits the source's *length*, so a cache is code we run: it is read only from a
// trusted directory (root's, not writable by anyone else along the whole path: ../fs/secure-dir.ts) and named by a
// hash of the source (or, for a bundle file, of that file's identity: a rebuilt file is a new inode change time),
// the Node version and the architecture, so a rebuilt bundle or an upgraded Node never sees a stale one. Written once, at the exit of the first run without one, so it holds the functions that run
// actually compiled — so a bundle whose runs differ (the CNI plugin's verbs) keeps one cache per kind of run
// (`variant`): a DEL never compiles what the first run, an ADD, did not need. Any failure here only costs the compile.
import { closeSync, fstatSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
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
  /** What tells this source from any other (fileKey, sourceKey): sourceKey(source) when not given. */
  key?: string;
}

/**
 * require() of a bundle file, through a code cache in `cacheDir` when that directory is trusted. The cache is named
 * by the file's identity, read from the descriptor the source is read from: no hash of the source, and no
 * node:crypto to load (~4 ms of a plugin call).
 */
export function requireWithCodeCache(file: string, cacheDir: string, variant?: string): unknown {
  const fd = openSync(file, 'r');
  let source: string;
  let key: string;
  try {
    key = fileKey(fd);
    source = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  return loadWithCodeCache({ source, filename: file, variant, key }, cacheDir);
}

/** Runs a CommonJS bundle and returns its exports, through a code cache in `cacheDir` when that is trusted. */
export function loadWithCodeCache(bundle: BundleSource, cacheDir: string): unknown {
  const { source, filename, variant } = bundle;
  const cacheFile = join(cacheDir, cacheName(filename, bundle.key ?? sourceKey(source), variant));
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

/** The cache file's name: the bundle's name (and the variant's), and `key` (what the cache must fit). */
export function cacheName(file: string, key: string, variant?: string): string {
  return `${cacheStem(file, variant)}-${key}${CACHE_SUFFIX}`;
}

/** A key of `source` itself: its SHA-256 with the Node version and the architecture. */
export function sourceKey(source: string): string {
  // required here: only a caller without a file (the self-contained executable's embedded bundles) pays for it
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(source).update(`\0${process.version}\0${process.arch}`).digest('hex').slice(0, KEY_LENGTH);
}

/**
 * A key of the file open on `fd` as it is now: device, inode, size, modification and inode change times (ns), with
 * the Node version and the architecture. Writing or replacing the file changes its inode change time, which no
 * one can set (a copy or an npm install that fixes mtimes included).
 */
export function fileKey(fd: number): string {
  const st = fstatSync(fd, { bigint: true });
  return hex128(`${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}\0${process.version}\0${process.arch}`);
}

/** 128 bits of four FNV-1a lanes of `text` (short): KEY_LENGTH hex digits. */
function hex128(text: string): string {
  let out = '';
  for (const seed of [0x811c9dc5, 0x01000193, 0x2166136b, 0x5bd1e995]) {
    let h = seed;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) ^ (h >>> 13);
    out += (h >>> 0).toString(16).padStart(8, '0');
  }
  return out;
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
