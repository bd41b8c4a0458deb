// A stand-in for podman's Docker-API service on a unix socket of the test's own: answers `GET /_ping` with OK
// (as `podman system service` does) and records every request path, so a test proves the socket was asked.
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

export interface DockerApiStandIn {
  /** unix://<socket>, as DOCKER_HOST names it. */
  host: string;
  requests: string[];
  close(): Promise<void>;
}

export async function dockerApiStandIn(dir: string): Promise<DockerApiStandIn> {
  const socket = join(dir, 'podman.sock');
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === '/_ping') res.end('OK');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  return { host: `unix://${socket}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
