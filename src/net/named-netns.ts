// Named network namespaces, the way `ip netns add/del` makes them — a namespace bind-mounted on a file in
// /var/run/netns — without a process per namespace: the local cluster provider makes and removes one per node.
import { closeSync, constants, openSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SysError, isSysError } from '../errors';
import { native } from '../native';
import { createAnonymousNetns } from './netns';
import { invalid } from './validate';
import { makeDirs } from '../util/make-dirs';

/** Where iproute2 keeps named namespaces (/var/run is /run). */
export const NETNS_RUN_DIR = '/var/run/netns';

/** A name `ip netns` accepts: one path component. */
function assertNetnsName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0') || Buffer.byteLength(name) > 255) {
    throw invalid('namespace name', name, 'expected one file name (no "/")');
  }
}

/**
 * The run directory as a shared mount point, as iproute2 leaves it: a namespace mounted here shows in (and is
 * unmounted from) every mount namespace that has a slave copy of it, such as a container runtime's.
 */
function prepareRunDir(dir: string): void {
  makeDirs(dir, 0o755);
  try {
    native.makeSharedMount(dir);
  } catch (err) {
    if (!isSysError(err, 'EINVAL')) throw err;
    // not a mount point yet: make it one (bound onto itself), then shared
    native.bindMount(dir, dir, true);
    native.makeSharedMount(dir);
  }
}

/**
 * Make the named namespace `name` (loopback up). EEXIST when the name is taken; nothing is left behind on
 * failure. Returns the namespace file's path.
 */
export function createNamedNetns(name: string, dir = NETNS_RUN_DIR): string {
  assertNetnsName(name);
  prepareRunDir(dir);
  const file = join(dir, name);
  try {
    closeSync(openSync(file, constants.O_RDONLY | constants.O_CREAT | constants.O_EXCL, 0));
  } catch (err) {
    throw fsFailure(err, `cannot create namespace file ${file}`, 'netns add');
  }
  const ns = createAnonymousNetns();
  try {
    // the fd's magic link is the namespace itself: mounting it on the file keeps the namespace alive
    native.bindMount(`/proc/self/fd/${ns.fd}`, file, false);
  } catch (err) {
    unlinkSync(file);
    throw err;
  } finally {
    ns.close();
  }
  return file;
}

/**
 * Remove the named namespace `name` (its mount and its file). The namespace itself ends when nothing else holds
 * it — processes in it, open fds, sockets. ENOENT when there is no such name.
 */
export function deleteNamedNetns(name: string, dir = NETNS_RUN_DIR): void {
  assertNetnsName(name);
  const file = join(dir, name);
  try {
    native.detachMount(file);
  } catch (err) {
    // EINVAL: a file that is not mounted (left by a crash between create and mount): still remove it
    if (!isSysError(err, 'EINVAL')) throw err;
  }
  try {
    unlinkSync(file);
  } catch (err) {
    throw fsFailure(err, `cannot remove namespace file ${file}`, 'netns delete');
  }
}

/** A failed fs call as the one error type (Node's errno is negative; ours is the kernel's). */
function fsFailure(err: unknown, what: string, op: string): SysError {
  const e = err as NodeJS.ErrnoException;
  return new SysError(`${what}: ${e.message}`, { code: e.code ?? 'EIO', errno: e.errno === undefined ? undefined : Math.abs(e.errno), op });
}
