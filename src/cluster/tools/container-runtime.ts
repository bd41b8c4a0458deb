// k3d and kind nodes are containers: a node's network namespace is reached through its container's init pid,
// asked from docker or podman (auto-detected, overridable) — never through a bind mount of ours.
import type { Env } from '../../config';
import { SysError } from '../../errors';
import { findOnPath, type ToolRunner } from './run-tool';

export const CONTAINER_RUNTIMES = ['docker', 'podman'] as const;
export type ContainerRuntime = (typeof CONTAINER_RUNTIMES)[number];

/**
 * The runtime to use: the one asked for, else $SRIOVCTL_CONTAINER_RUNTIME, else kind's own podman switch
 * ($KIND_EXPERIMENTAL_PROVIDER), else the first of docker, podman on PATH; null when none is there.
 */
export function detectContainerRuntime(
  asked: ContainerRuntime | null,
  env: Env,
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

/** Podman's system socket, where `systemctl start podman.socket` (as root) puts it. */
export const PODMAN_SOCKET = '/run/podman/podman.sock';

/**
 * The Docker-API socket k3d is pointed at when the runtime is podman (k3d speaks only the Docker API; podman
 * serves it on its socket): $DOCKER_HOST when it names a unix socket, else $CONTAINER_HOST's, else podman's own.
 */
export function podmanDockerHost(env: Env): string {
  for (const v of [env.DOCKER_HOST, env.CONTAINER_HOST]) if (v?.startsWith('unix://')) return v;
  return `unix://${PODMAN_SOCKET}`;
}

/**
 * Why the Docker API at `dockerHost` (unix://…) cannot serve k3d, or null when it answers `GET /_ping` with OK.
 * Bounded in time: a wedged service is a preflight problem, not a hang.
 */
export async function dockerApiProblem(dockerHost: string, timeoutMs = 10_000): Promise<string | null> {
  const socketPath = dockerHost.replace(/^unix:\/\//, '');
  const howTo = `start it with \`systemctl start podman.socket\` or \`podman system service --time=0 ${dockerHost} &\``;
  const { request } = await import('node:http');
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve(res.statusCode === 200 && body.trim() === 'OK' ? null : `podman's Docker API at ${dockerHost} answered HTTP ${res.statusCode} to /_ping (${howTo})`),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const what = err.code === 'ENOENT' ? 'does not exist' : err.code === 'ECONNREFUSED' ? 'refuses connections' : err.message;
      resolve(`podman's Docker API socket ${socketPath} ${what}: k3d reaches podman through it (${howTo})`);
    });
    req.end();
  });
}
