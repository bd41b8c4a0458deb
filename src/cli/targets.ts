// `<target>` on the command line → where the lending engine should put a NIC. Nothing is bind-mounted, and a
// pid's namespace is held open only for the command, so a target never keeps its namespace alive afterwards.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NamespaceSpec } from '../lend';
import type { NetnsId } from '../net/types';
import { openNetnsOfPid } from '../net';
import { isSysError } from '../errors';
import { CONTAINER_RUNTIMES, containerPid, type ContainerRuntime } from '../cluster/tools/container-runtime';
import { runTool } from '../cluster/tools/run-tool';
import type { Env } from '../config';
import { CliError, usageError } from './exit-codes';
import { statNetnsId } from '../net';

/** Where `ip netns add` puts named namespaces. */
export const NETNS_DIR = '/var/run/netns';

/** statfs f_type of nsfs: a namespace file (a bind mount of one, or /proc/<pid>/ns/*). */
const NSFS_MAGIC = 0x6e736673;

export interface TargetContext {
  /** Directory of named namespaces (tests point it elsewhere). */
  netnsDir?: string;
  /** The environment docker/podman run with: the front door's (Config.env). Absent: Node's default for a child. */
  env?: Env;
}

/**
 * Resolves a target as typed:
 *   `pid:<pid>`                     → { netns } of that process, opened now through a pidfd
 *   `docker:<c>` / `podman:<c>`     → { netns } of the running container's init process, likewise
 *   anything with a '/'             → { path } of a namespace file
 *   a bare name                     → { path } of /var/run/netns/<name>
 * Syntax errors are usage errors (exit 2); a target that does not exist is a failure (exit 1).
 */
export async function resolveTarget(text: string, ctx: TargetContext = {}): Promise<NamespaceSpec> {
  if (text === '') throw usageError('target: empty');
  const scheme = /^([a-z]+):(.*)$/s.exec(text);
  if (scheme?.[1] === 'pid') return openedPid(text, scheme[2]);
  if (scheme && (CONTAINER_RUNTIMES as readonly string[]).includes(scheme[1])) {
    return openedPid(text, String(await runningContainerPid(text, scheme[1] as ContainerRuntime, scheme[2], ctx.env)));
  }
  if (text.includes('/')) return { path: checkedNamespaceFile(text, text) };
  if (text === '.' || text === '..') throw usageError(`target ${text}: not a namespace name`);
  return { path: checkedNamespaceFile(text, path.join(ctx.netnsDir ?? NETNS_DIR, text)) };
}

// Names and ids as both runtimes accept them; a leading '-' would be read as an option.
const CONTAINER_REF = /^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$/;

/** The init pid of a running container, asked from its runtime's CLI as kubevirtci's scripts do. */
async function runningContainerPid(label: string, runtime: ContainerRuntime, container: string, env: Env | undefined): Promise<number> {
  if (!CONTAINER_REF.test(container)) throw usageError(`target ${label}: not a container name or id`);
  try {
    return await containerPid((cmd, args, o) => runTool(cmd, args, { ...o, env }), runtime, container);
  } catch (err) {
    throw new CliError(`target ${label}: ${(err as Error).message}`);
  }
}

/**
 * `<target>` names a pid: it must be a live process whose network namespace we can open. It is opened here, once,
 * through a pidfd, and the open namespace is the target: a pid that exits and is reused before the NIC moves
 * cannot redirect it. The caller closes it (releaseTarget).
 */
function openedPid(label: string, value: string): NamespaceSpec {
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 0x3fffffff) {
    throw usageError(`target ${label}: not a pid (${JSON.stringify(value)})`);
  }
  const pid = Number(value);
  try {
    return { netns: openNetnsOfPid(pid) };
  } catch (err) {
    if (!isSysError(err)) throw err;
    const why = err.code === 'ESRCH' || err.code === 'ENOENT' ? 'no such process' : err.code === 'EACCES' || err.code === 'EPERM' ? 'permission denied' : err.message;
    throw new CliError(`target ${label}: ${why}`);
  }
}

/** Closes what resolveTarget opened (a pid's namespace); a path target holds nothing. */
export function releaseTarget(spec: NamespaceSpec): void {
  if ('netns' in spec) spec.netns.close();
}

/** The file must exist and be a namespace file (nsfs); returns the path as given. */
function checkedNamespaceFile(label: string, file: string): string {
  let type: number;
  try {
    type = Number(fs.statfsSync(file).type);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such network namespace' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (err as Error).message;
    throw new CliError(`target ${label}: ${why}${file !== label ? ` (${file})` : ''}`);
  }
  if (type !== NSFS_MAGIC) throw new CliError(`target ${label}: ${file} is not a namespace file`);
  return file;
}

/** The identity (nsfs device + inode) of the namespace a spec names right now. */
export function namespaceIdOf(spec: NamespaceSpec): NetnsId {
  if ('netns' in spec) return spec.netns.id;
  const file = 'pid' in spec ? `/proc/${spec.pid}/ns/net` : spec.path;
  const id = statNetnsId(file);
  if (!id) throw new CliError(`namespace ${file} is gone`);
  return id;
}
