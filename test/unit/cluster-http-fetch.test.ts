import { describe, expect, it } from 'vitest';
import { proxyFor } from '../../src/cluster/http-fetch';

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
