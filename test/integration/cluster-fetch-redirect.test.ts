// A manifest asked for over https is never taken over plain http: an https origin (trusted by this test) that
// redirects to an http URL gets a refusal naming the redirect, and the http origin is never asked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, globalAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchText } from '../../src/cluster/tools/http-fetch';

let certDir: string;
let servers: Server[];
let plainHits: string[];
const savedCa = globalAgent.options.ca;

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeEach(() => {
  servers = [];
  plainHits = [];
  certDir = mkdtempSync(join(tmpdir(), 'sriovctl-redirect-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(certDir, 'k'), '-out', join(certDir, 'c'), '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1'], { stdio: 'ignore' });
});

afterEach(async () => {
  globalAgent.options.ca = savedCa;
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  rmSync(certDir, { recursive: true, force: true });
});

describe('redirects', () => {
  it('https redirected to http is refused, and the http URL is never fetched', async () => {
    const plainPort = await listen(
      createHttpServer((req, res) => {
        plainHits.push(req.url ?? '');
        res.end('kind: ConfigMap\n');
      }),
    );
    const cert = readFileSync(join(certDir, 'c'));
    const tlsPort = await listen(
      createHttpsServer({ key: readFileSync(join(certDir, 'k')), cert }, (req, res) => {
        if (req.url === '/same') res.writeHead(302, { location: `/ok` }).end();
        else if (req.url === '/ok') res.end('kind: Namespace\n');
        else res.writeHead(301, { location: `http://127.0.0.1:${plainPort}/calico.yaml` }).end();
      }) as unknown as Server,
    );
    globalAgent.options.ca = [cert]; // this test's origin is trusted; nothing else about TLS changes
    // an https to https redirect is still followed
    await expect(fetchText(`https://127.0.0.1:${tlsPort}/same`, { timeoutMs: 20_000, op: 't', env: {} })).resolves.toBe('kind: Namespace\n');
    const err = await fetchText(`https://127.0.0.1:${tlsPort}/calico.yaml`, { timeoutMs: 20_000, op: 't', env: {} }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(
      `cannot fetch https://127.0.0.1:${tlsPort}/calico.yaml: redirected to http://127.0.0.1:${plainPort}/calico.yaml, which is not https: refused`,
    );
    expect(plainHits).toEqual([]);
  });
});
