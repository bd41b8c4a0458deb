// The primary CNI manifest fetched through the proxy the environment names: a real CONNECT proxy on loopback
// records what reached it and tunnels `manifests.invalid:80` to a local origin server and `manifests.invalid:443`
// to a local TLS server, which stand for the internet. Node's own fetch ignores these variables: without the
// tunnel the host (.invalid never resolves) could not be reached at all.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifestSource } from '../../src/cluster/kubernetes/primary-cni';
import { restoreEnv } from './cluster-fixture';

const MANIFEST = 'kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: through-the-proxy\n';
const VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];

let proxy: Server;
let origin: Server;
let tlsOrigin: TlsServer;
let tlsPort: number;
let tlsSeen: string[];
let silent: boolean;
let certDir: string;
/** Tunnels and TLS connections: detached from the HTTP servers, so closed here. */
let sockets: { destroy(): void }[];
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
  tlsSeen = [];
  silent = false;
  sockets = [];
  // a self-signed certificate: the client must refuse it, which proves the TLS handshake reached the origin
  certDir = mkdtempSync(join(tmpdir(), 'sriovctl-proxy-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(certDir, 'k'), '-out', join(certDir, 'c'), '-subj', '/CN=manifests.invalid', '-days', '1'], { stdio: 'ignore' });
  tlsOrigin = createTlsServer({
    key: readFileSync(join(certDir, 'k')),
    cert: readFileSync(join(certDir, 'c')),
    // records the name the client asked for (SNI), then goes on with the default context
    SNICallback: (servername, cb) => {
      tlsSeen.push(servername);
      cb(null, undefined);
    },
  });
  tlsOrigin.on('tlsClientError', () => undefined);
  tlsOrigin.on('connection', (socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => tlsOrigin.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsOrigin.address() as AddressInfo).port;
  origin = createServer((req, res) => {
    originSeen.push(`${req.method} ${req.url}`);
    if (req.url === '/calico.yaml') res.end(MANIFEST);
    else if (req.url === '/moved.yaml') res.writeHead(302, { location: '/calico.yaml' }).end();
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
    sockets.push(socket);
    socket.on('error', () => undefined);
    if (silent) return; // a proxy that never answers
    const port = req.url === 'manifests.invalid:80' ? originPort : req.url === 'manifests.invalid:443' && tlsPort;
    if (!port) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    sockets.push(upstream);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

afterEach(async () => {
  for (const v of VARS) restoreEnv(v, saved[v]);
  for (const s of sockets) s.destroy();
  proxy.closeAllConnections();
  origin.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await new Promise((r) => origin.close(r));
  await new Promise((r) => tlsOrigin.close(r));
  rmSync(certDir, { recursive: true, force: true });
});

describe('primary CNI manifest through a proxy', () => {
  it('HTTP_PROXY: the request goes through a tunnel the proxy opened', async () => {
    process.env.HTTP_PROXY = proxyUrl;
    expect(await loadManifestSource('http://manifests.invalid/calico.yaml', { env: process.env, timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(seen).toEqual(['CONNECT manifests.invalid:80']);
    expect(originSeen).toEqual(['GET /calico.yaml']);
  });

  it('https_proxy (lower case): TLS runs through the tunnel to the origin, which is verified (a self-signed one is refused)', async () => {
    process.env.https_proxy = proxyUrl;
    const err = await loadManifestSource('https://manifests.invalid/calico.yaml', { env: process.env, timeoutMs: 20_000 }).catch((e: Error) => e);
    expect(seen).toEqual(['CONNECT manifests.invalid:443']);
    expect(tlsSeen).toEqual(['manifests.invalid']);
    expect((err as Error).message).toBe(`cannot fetch https://manifests.invalid/calico.yaml (through proxy ${proxyUrl}): self-signed certificate`);
  });

  it('a refused tunnel, a redirect, a proxy that never answers', async () => {
    process.env.HTTPS_PROXY = proxyUrl;
    process.env.HTTP_PROXY = proxyUrl;
    await expect(loadManifestSource('https://manifests.invalid:8443/x.yaml', { env: process.env, timeoutMs: 20_000 })).rejects.toThrow(
      `cannot fetch https://manifests.invalid:8443/x.yaml (through proxy ${proxyUrl}): the proxy answered HTTP 403 to CONNECT manifests.invalid:8443`,
    );
    expect(await loadManifestSource('http://manifests.invalid/moved.yaml', { env: process.env, timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(originSeen).toEqual(['GET /moved.yaml', 'GET /calico.yaml']);
    silent = true;
    await expect(loadManifestSource('http://manifests.invalid/calico.yaml', { env: process.env, timeoutMs: 300 })).rejects.toThrow(/\(through proxy http:\/\/127\.0\.0\.1:\d+\): no answer within 1 s$/);
  });

  it('NO_PROXY: a listed host is reached directly', async () => {
    process.env.HTTP_PROXY = proxyUrl;
    process.env.NO_PROXY = '127.0.0.1';
    expect(await loadManifestSource(`http://127.0.0.1:${originPort}/calico.yaml`, { env: process.env, timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(seen).toEqual([]);
    expect(originSeen).toEqual(['GET /calico.yaml']);
  });

  it('without a proxy, a URL is fetched directly and an HTTP error is a clear failure', async () => {
    expect(await loadManifestSource(`http://127.0.0.1:${originPort}/calico.yaml`, { env: process.env, timeoutMs: 20_000 })).toBe(MANIFEST);
    expect(seen).toEqual([]);
    process.env.HTTP_PROXY = proxyUrl;
    await expect(loadManifestSource('http://manifests.invalid/other.yaml', { env: process.env, timeoutMs: 20_000 })).rejects.toThrow(
      `cannot fetch http://manifests.invalid/other.yaml (through proxy ${proxyUrl}): HTTP 404`,
    );
    expect(seen).toEqual(['CONNECT manifests.invalid:80']);
  });
});
