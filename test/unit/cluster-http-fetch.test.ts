import { describe, expect, it } from 'vitest';
import { createServer, type AddressInfo } from 'node:net';
import { fetchText, proxyFor, withoutCredentials } from '../../src/cluster/tools/http-fetch';

describe('the proxy named in fetch errors', () => {
  it('follows the scheme, lower case first, and NO_PROXY', () => {
    expect(proxyFor('https://a.example/x', { HTTPS_PROXY: 'http://p:3128' })).toBe('http://p:3128');
    expect(proxyFor('https://a.example/x', { HTTPS_PROXY: 'http://P:1', https_proxy: 'http://p:2' })).toBe('http://p:2');
    expect(proxyFor('http://a.example/x', { HTTPS_PROXY: 'http://p:3128' })).toBeNull();
    expect(proxyFor('https://a.example/x', { HTTPS_PROXY: 'http://p:3128', NO_PROXY: 'b.example,.example' })).toBeNull();
    expect(proxyFor('https://a.example/x', { HTTPS_PROXY: 'http://p:3128', NO_PROXY: 'xa.example' })).toBe('http://p:3128');
    expect(proxyFor('https://a.example/x', { HTTPS_PROXY: 'http://p:3128', no_proxy: '*' })).toBeNull();
  });
});

describe('a proxy in errors is named without its credentials', () => {
  it('user and password become *** in the message, for a proxy that cannot be reached and one of an unsupported scheme', async () => {
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((r) => free.close(() => r()));
    const unreachable = await fetchText('http://manifests.invalid/x.yaml', { timeoutMs: 10_000, op: 't', env: { http_proxy: `http://user:S3cret@127.0.0.1:${port}` } }).catch((e: Error) => e);
    expect((unreachable as Error).message).toContain(`(through proxy http://***@127.0.0.1:${port})`);
    const socks = await fetchText('https://manifests.invalid/x.yaml', { timeoutMs: 10_000, op: 't', env: { https_proxy: 'socks5://user:S3cret@127.0.0.1:1' } }).catch((e: Error) => e);
    expect((socks as Error).message).toContain('socks5://***@127.0.0.1:1');
    for (const err of [unreachable, socks]) expect(String((err as Error).message)).not.toMatch(/S3cret|user/);
  });

  it('withoutCredentials leaves a URL without any unchanged', () => {
    expect(withoutCredentials('http://p:3128')).toBe('http://p:3128');
    expect(withoutCredentials('p:3128')).toBe('p:3128');
    expect(withoutCredentials('u:pw@p:3128')).toBe('http://***@p:3128');
  });
});
