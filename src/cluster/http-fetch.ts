// The one place `cluster up` uses the network itself (a --primary-cni URL): through the proxy the environment
// names. Node's built-in fetch ignores HTTPS_PROXY/HTTP_PROXY/NO_PROXY; undici's EnvHttpProxyAgent reads them as
// curl does (lower case first, CONNECT for https). undici is loaded only when a URL is actually fetched.
import { SysError } from '../errors';

/** The body of `url` as text, bounded in time; a failure names the URL and, when one was used, the proxy. */
export async function fetchText(url: string, opts: { timeoutMs: number; op: string }): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const undici = require('undici') as typeof import('undici');
  const dispatcher = new undici.EnvHttpProxyAgent();
  const via = proxyFor(url);
  const where = via ? ` (through proxy ${via})` : '';
  try {
    const res = await undici.fetch(url, { dispatcher, signal: AbortSignal.timeout(opts.timeoutMs) });
    if (!res.ok) throw new SysError(`cannot fetch ${url}${where}: HTTP ${res.status}`, { code: 'UNREACHABLE', op: opts.op });
    return await res.text();
  } catch (err) {
    if (err instanceof SysError) throw err;
    const cause = (err as { cause?: Error }).cause;
    const why = cause?.message ? `${(err as Error).message}: ${cause.message}` : (err as Error).message;
    throw new SysError(`cannot fetch ${url}${where}: ${why}`, { code: 'UNREACHABLE', op: opts.op });
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}

/**
 * For messages only: the proxy the environment names for this URL, null when none or when NO_PROXY lists its host
 * (exactly, as a domain suffix, or `*`) — the routing itself is undici's.
 */
export function proxyFor(url: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const { protocol, hostname } = new URL(url);
  const value = protocol === 'https:' ? (env.https_proxy ?? env.HTTPS_PROXY) : (env.http_proxy ?? env.HTTP_PROXY);
  if (!value) return null;
  const noProxy = (env.no_proxy ?? env.NO_PROXY ?? '').split(/[,\s]+/).filter(Boolean);
  const bypassed = noProxy.some((entry) => {
    const host = entry.replace(/^\*?\./, '').replace(/:\d+$/, '');
    return entry === '*' || hostname === host || hostname.endsWith(`.${host}`);
  });
  return bypassed ? null : value;
}
