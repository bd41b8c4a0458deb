// Which CNI versions a delegate plugin speaks, asked once (its VERSION verb) and remembered in the state
// directory, keyed by the binary's path, inode, size and mtime: an upgraded plugin is asked again, and an ADD
// does not pay an extra exec every time.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../config';
import { execDelegate } from './delegate';
import { CNI_ERR, CniError } from './errors';
import { LATEST_VERSION, isVersionString } from './versions';
import { writeFileAtomic } from '../fs/atomic-file';
import { ensureTrustedStateDir, untrustedReason } from '../fs/secure-dir';
import { readStateFile } from '../fs/state-file';

interface CacheFile {
  /** key → supported versions */
  plugins: Record<string, string[]>;
}

export function cacheFile(stateDir: string): string {
  return join(stateDir, 'cni', 'plugin-versions.json');
}

export function cacheKey(path: string): string {
  const st = statSync(path);
  return `${path}|${st.ino}|${st.size}|${Math.trunc(st.mtimeMs)}`;
}

/** The versions the plugin at `path` supports (from the cache under `stateDir`, else by asking it). */
export function pluginVersions(stateDir: string, path: string, label: string, timeoutMs?: number | CniError, inherit?: Env): string[] {
  const key = cacheKey(path);
  const cache = readCache(stateDir);
  const known = cache.plugins[key];
  if (known) return known;
  const versions = askVersions(path, label, timeoutMs, inherit);
  // drop entries for older builds of the same path; concurrent writers each rename a whole file, last one wins
  for (const k of Object.keys(cache.plugins)) if (k.startsWith(`${path}|`)) delete cache.plugins[k];
  cache.plugins[key] = versions;
  writeCache(stateDir, cache);
  return versions;
}

function askVersions(path: string, label: string, timeoutMs: number | CniError | undefined, inherit: Env | undefined): string[] {
  const { stdout } = execDelegate({ path, label, command: 'VERSION', stdin: JSON.stringify({ cniVersion: LATEST_VERSION }), timeoutMs, inherit });
  let reply: unknown;
  try {
    reply = JSON.parse(stdout);
  } catch {
    throw new CniError(CNI_ERR.IPAM_BAD_RESULT, `${label} VERSION: answer is not JSON`, stdout.slice(0, 200));
  }
  const list = (reply as { supportedVersions?: unknown })?.supportedVersions;
  if (!Array.isArray(list) || !list.every(isVersionString)) {
    throw new CniError(CNI_ERR.IPAM_BAD_RESULT, `${label} VERSION: no supportedVersions list`, stdout.slice(0, 200));
  }
  return list as string[];
}

function readCache(stateDir: string): CacheFile {
  try {
    // a cache anyone else could have written is not read
    if (untrustedReason(join(stateDir, 'cni')) !== null) return { plugins: {} };
    const parsed = JSON.parse(readStateFile(cacheFile(stateDir)).toString('utf8')) as CacheFile;
    if (parsed && typeof parsed.plugins === 'object' && parsed.plugins !== null) return parsed;
  } catch {
    // absent or unreadable: start afresh (it is only a cache)
  }
  return { plugins: {} };
}

function writeCache(stateDir: string, cache: CacheFile): void {
  const file = cacheFile(stateDir);
  try {
    ensureTrustedStateDir(stateDir, ['cni']);
    writeFileAtomic(file, JSON.stringify(cache), 0o600, { durable: false });
  } catch {
    // a cache that cannot be written only costs an exec next time
  }
}
