// k3d and kind nodes are containers: a node's network namespace is reached through its container's init pid,
// asked from docker or podman (auto-detected, overridable) — never through a bind mount of ours.
import { SysError } from '../errors';
import { findOnPath, type ToolRunner } from './tools';

export const CONTAINER_RUNTIMES = ['docker', 'podman'] as const;
export type ContainerRuntime = (typeof CONTAINER_RUNTIMES)[number];

/**
 * The runtime to use: the one asked for, else $SRIOVCTL_CONTAINER_RUNTIME, else kind's own podman switch
 * ($KIND_EXPERIMENTAL_PROVIDER), else the first of docker, podman on PATH; null when none is there.
 */
export function detectContainerRuntime(
  asked: ContainerRuntime | null,
  env: NodeJS.ProcessEnv = process.env,
): ContainerRuntime | null {
  if (asked) return asked;
  for (const hint of [env.SRIOVCTL_CONTAINER_RUNTIME, env.KIND_EXPERIMENTAL_PROVIDER]) {
    if (hint && (CONTAINER_RUNTIMES as readonly string[]).includes(hint)) return hint as ContainerRuntime;
  }
  return CONTAINER_RUNTIMES.find((r) => findOnPath(r, env) !== null) ?? null;
}

/** The pid of a running container, from `<runtime> inspect`. */
export async function containerPid(run: ToolRunner, runtime: ContainerRuntime, container: string): Promise<number> {
  const { stdout } = await run(runtime, ['inspect', '--type', 'container', '--format', '{{.State.Pid}}', container], {
    timeoutMs: 30_000,
  });
  const text = stdout.trim();
  const op = `${runtime} inspect ${container}`;
  if (!/^\d+$/.test(text)) throw new SysError(`no pid for container ${container} (got ${JSON.stringify(text)})`, { code: 'NOT_FOUND', op });
  const pid = Number(text);
  if (pid === 0) throw new SysError(`container ${container} is not running`, { code: 'NOT_FOUND', op });
  return pid;
}
