// The primary CNI manifest fetched through the proxy the environment names: a real CONNECT proxy on loopback
// (undici tunnels plain http through CONNECT too) records what reached it and tunnels `manifests.invalid:80` to a
// local origin server, which stands for the internet. Node's own fetch ignores these variables: without the proxy
// agent the host (.invalid never resolves) could not be reached at all.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifestSource } from '../../src/cluster/primary-cni';
import { restoreEnv } from './cluster-fixture';

const MANIFEST = 'kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: through-the-proxy\n';
const VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];

let proxy: Server;
let origin: Server;
let proxyUrl: string;
let originPort: number;
let seen: string[];
let originSeen: string[];
const saved: Record<string, string | undefined> = {};

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeEach(async () => {
  for (const v of VARS) {
    saved[v] = process.env[v];
    delete process.env[v];
  }
  seen = [];
  originSeen = [];
  origin = createServer((req, res) => {
    originSeen.push(`${req.method} ${req.url}`);
    if (req.url === '/calico.yaml') res.end(MANIFEST);
    else res.writeHead(404).end();
  });
  originPort = await listen(origin);
  // plain requests in absolute form are refused: every tunnel goes through CONNECT; only port 80 is let through
  proxy = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(405).end();
  });
  proxy.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url}`);
    if (req.url !== 'manifests.invalid:80') {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(originPort, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

afterEach(async () => {
  for (const v of VARS) restoreEnv(v, saved[v]);
  proxy.closeAllConnections();
  origin.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await new Promise((r) => origin.close(r));
});

describe('primary CNI manifest through a proxy', () => {
  it('HTTP_PROXY: the request goes through a tunnel the proxy opened', async () => {
    process.env.HTTP_PROXY = proxyUrl;
    expect(await loadManifestSource('http://manifests.invalid/calico.yaml', { timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(seen).toEqual(['CONNECT manifests.invalid:80']);
    expect(originSeen).toEqual(['GET /calico.yaml']);
  });

  it('https_proxy (lower case): a CONNECT tunnel is asked of the proxy, and its refusal is reported with the proxy named', async () => {
    process.env.https_proxy = proxyUrl;
    const err = await loadManifestSource('https://manifests.invalid/calico.yaml', { timeoutMs: 20_000 }).catch((e: Error) => e);
    expect(seen).toEqual(['CONNECT manifests.invalid:443']);
    expect((err as Error).message).toMatch(new RegExp(`^cannot fetch https://manifests\\.invalid/calico\\.yaml \\(through proxy ${proxyUrl.replace(/\./g, '\\.')}\\): `));
  });

  it('NO_PROXY: a listed host is reached directly', async () => {
    process.env.HTTP_PROXY = proxyUrl;
    process.env.NO_PROXY = '127.0.0.1';
    expect(await loadManifestSource(`http://127.0.0.1:${originPort}/calico.yaml`, { timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(seen).toEqual([]);
    expect(originSeen).toEqual(['GET /calico.yaml']);
  });

  it('without a proxy, a URL is fetched directly and an HTTP error is a clear failure', async () => {
    expect(await loadManifestSource(`http://127.0.0.1:${originPort}/calico.yaml`, { timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(seen).toEqual([]);
    process.env.HTTP_PROXY = proxyUrl;
    await expect(loadManifestSource('http://manifests.invalid/other.yaml', { timeoutMs: 20_000 })).rejects.toThrow(
      `cannot fetch http://manifests.invalid/other.yaml (through proxy ${proxyUrl}): HTTP 404`,
    );
    expect(seen).toEqual(['CONNECT manifests.invalid:80']);
  });
});
