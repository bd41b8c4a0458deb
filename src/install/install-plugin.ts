// install-cni's work: the plugin and its payload (src/package/payload-layout.ts) into a CNI bin dir, so the plugin runs on a
// node without glibc. Order and atomicity, for a kubelet that may run the plugin at any moment:
//   1. the payload is written whole into a temp dir, fsynced, renamed to its immutable sriovctl.d-<hash>;
//   2. the sriovctl.d link is swapped to it by rename (a new symlink renamed over the old one): a launcher sees
//      the old payload or the new one, and resolves it once, so never mixes two glibcs;
//   3. <binDir>/<plugin> becomes the shim or the launcher (temp file, fsync, rename), only once its payload is in
//      place (the shim's fallback is the payload's launcher, through the link);
// It runs under the directory's install lock (./install-lock.ts), and first removes what earlier installs left
// (./leftovers.ts): temp dirs and files of a killed installer and, at an upgrade, payloads older than the one
// replaced that nothing runs from (the replaced one stays until the next upgrade: a launcher may have just resolved
// it). The same content again writes nothing else. A failure leaves what was installed before,
// and no temp file.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fsyncDir, TEMP_MARKER } from '../fs/atomic-file';
import { PAYLOAD_LIB_DIR, PAYLOAD_LINK, payloadVersionName } from '../package/payload-layout';
import { contentSize, hashContent, holdsContent, writeContent, type Content } from './content';
import { checkTargetDir, INSTALLED_MODE, InstallError, installExecutable, type InstallOutcome } from './install-executable';
import type { InstallLock } from './install-lock';
import { removeLeftovers, removePayloadIfUnused } from './leftovers';

/** One payload file: its path inside the payload dir ('sriovctl', 'lib/libc.so.6', …) and its bytes. */
export interface PayloadFile {
  path: string;
  content: Content;
}

/**
 * Installs `payload`, and `plugin` (the shim or the launcher) as `<lock.dir>/<pluginName>`, under the directory's
 * install lock; throws InstallError naming what failed. `warn` gets a line for each leftover that is not ours to remove.
 */
export function installPlugin(lock: InstallLock, pluginName: string, payload: readonly PayloadFile[], plugin: Content, warn: (line: string) => void = () => undefined): InstallOutcome {
  const dir = lock.dir;
  checkTargetDir(dir);
  const version = payloadVersionName(payloadHash(payload));
  const previous = linkTarget(join(dir, PAYLOAD_LINK));
  // at an upgrade, payloads older than the one replaced go first (the disk may hold two payloads, not three)
  const keep = previous === version ? 'all' : [version, ...(previous === null ? [] : [previous])];
  for (const line of removeLeftovers(lock, [pluginName], keep)) warn(line);
  const complete = holdsPayload(join(dir, version), payload);
  if (previous === version && complete && holdsContent(join(dir, pluginName), plugin, INSTALLED_MODE)) return 'unchanged';
  if (!complete) step(join(dir, version), () => writePayload(dir, version, payload));
  if (previous !== version) step(join(dir, PAYLOAD_LINK), () => swapLink(dir, version));
  installExecutable(plugin, dir, pluginName);
  return 'installed';
}

function step(target: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    throw new InstallError(`cannot write ${target}: ${(err as Error).message}`);
  }
}

function payloadHash(payload: readonly PayloadFile[]): string {
  const hash = createHash('sha256');
  for (const f of payload) {
    hash.update(`${f.path}\0${contentSize(f.content)}\0`);
    hashContent(f.content, hash);
  }
  return hash.digest('hex');
}

/** The link's target when `link` is a symlink, else null. */
function linkTarget(link: string): string | null {
  try {
    return readlinkSync(link);
  } catch {
    return null;
  }
}

/** `dir` is a real directory holding exactly the payload's files (0755, their bytes) and nothing else. */
function holdsPayload(dir: string, payload: readonly PayloadFile[]): boolean {
  try {
    if (!lstatSync(dir).isDirectory()) return false;
    const present = readdirSync(dir, { recursive: true }).map(String).sort();
    const expected = [...new Set([...payload.map((f) => f.path), ...payload.map((f) => dirname(f.path)).filter((d) => d !== '.')])].sort();
    if (present.join('\0') !== expected.join('\0')) return false;
  } catch {
    return false;
  }
  return payload.every((f) => holdsContent(join(dir, f.path), f.content, INSTALLED_MODE));
}

function writePayload(dir: string, version: string, payload: readonly PayloadFile[]): void {
  const temp = makeTempDir(dir, version);
  try {
    makeDir(join(temp, PAYLOAD_LIB_DIR));
    for (const f of payload) writeNewFile(join(temp, f.path), f.content);
    fsyncDir(join(temp, PAYLOAD_LIB_DIR));
    fsyncDir(temp);
    // a payload dir of this name that is not whole (or was changed) is replaced, unless a launcher runs from it
    const kept = removePayloadIfUnused(join(dir, version));
    if (kept !== null) throw new Error(`a damaged payload of that name is in the way (${kept})`);
    renameSync(temp, join(dir, version));
    fsyncDir(dir);
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    throw err;
  }
}

/** A new temp dir for payload `version`: pid and random, made with mkdir (never reusing what a dead installer left). */
function makeTempDir(dir: string, version: string): string {
  for (;;) {
    const temp = join(dir, `.${version}${TEMP_MARKER}${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      makeDir(temp);
      return temp;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

function makeDir(path: string): void {
  mkdirSync(path, { mode: INSTALLED_MODE });
  // the umask can narrow the mode; set it exactly
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fchmodSync(fd, INSTALLED_MODE);
  } finally {
    closeSync(fd);
  }
}

function writeNewFile(path: string, content: Content): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, INSTALLED_MODE);
  try {
    fchmodSync(fd, INSTALLED_MODE);
    writeContent(content, fd);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Points the sriovctl.d link at `version` by renaming a new link over it. */
function swapLink(dir: string, version: string): void {
  const link = join(dir, PAYLOAD_LINK);
  const temp = join(dir, `.${PAYLOAD_LINK}${TEMP_MARKER}${process.pid}`);
  rmSync(temp, { force: true });
  symlinkSync(version, temp);
  try {
    // a real directory in the link's place (not ours: we only ever make the link) cannot be renamed over
    if (isRealDirectory(link)) renameSync(link, join(dir, `${PAYLOAD_LINK}-replaced-${process.pid}`));
    renameSync(temp, link);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  fsyncDir(dir);
}

function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
