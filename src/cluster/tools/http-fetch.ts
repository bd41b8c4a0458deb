// The one place `cluster up` uses the network itself (a --primary-cni URL): through the proxy the environment
// names, as curl reads it — https_proxy/HTTPS_PROXY for https, http_proxy/HTTP_PROXY for http, NO_PROXY to bypass.
// Node's own fetch ignores these variables. A small client instead of a dependency: a CONNECT tunnel through the
// proxy (for http too), TLS over it for https, redirects followed a few times (never from https to http: a manifest
// asked for over TLS is never taken in the clear), the body bounded, one deadline. A proxy is only ever named
// without its credentials: errors end up in CI logs.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Env } from '../../config';
import { SysError } from '../../errors';

const MAX_REDIRECTS = 5;
const MAX_BODY = 32 * 1024 * 1024;

/**
 * The body of `url` as text, bounded in time; a failure names the URL and, when one was used, the proxy. `env`: the
 * front door's, whose proxy variables apply.
 */
export async function fetchText(url: string, opts: { timeoutMs: number; op: string; env: Env }): Promise<string> {
  const env = opts.env;
  const deadline = Date.now() + opts.timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    const via = proxyFor(current, env);
    const where = via ? ` (through proxy ${withoutCredentials(via)})` : '';
    const fail = (why: string) => new SysError(`cannot fetch ${withoutCredentials(url)}${where}: ${why}`, { code: 'UNREACHABLE', op: opts.op });
    let res: { status: number; location: string | null; body: string };
    try {
      res = await once(current, via, deadline);
    } catch (err) {
      throw fail((err as Error).message);
    }
    if (res.status >= 300 && res.status < 400 && res.location) {
      if (hop >= MAX_REDIRECTS) throw fail(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(res.location, current);
      if (new URL(current).protocol === 'https:' && next.protocol !== 'https:') {
        throw fail(`redirected to ${withoutCredentials(next.toString())}, which is not https: refused`);
      }
      current = next.toString();
      continue;
    }
    if (res.status !== 200) throw fail(`HTTP ${res.status}`);
    return res.body;
  }
}

/** One GET of `url`, directly or through a CONNECT tunnel of `proxy`. */
function once(url: string, proxy: string | null, deadline: number): Promise<{ status: number; location: string | null; body: string }> {
  const target = new URL(url);
  const https = target.protocol === 'https:';
  if (!https && target.protocol !== 'http:') return Promise.reject(new Error(`unsupported scheme ${target.protocol}`));
  const port = Number(target.port || (https ? 443 : 80));
  return new Promise((resolve, reject) => {
    const open: { destroy(): void }[] = [];
    let settled = false;
    const finish = (err: Error | null, value?: { status: number; location: string | null; body: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const o of open) o.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${Math.round((deadline - Date.now() + 999) / 1000) || 1} s`)), Math.max(0, deadline - Date.now()));

    const get = (socket: Socket | null) => {
      const req: ClientRequest = (https ? httpsRequest : httpRequest)(url, {
        method: 'GET',
        headers: { accept: '*/*', 'user-agent': 'sriovctl' },
        ...(socket ? { createConnection: () => socket } : {}),
      });
      open.push(req);
      req.on('error', (e) => finish(e));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) finish(new Error(`more than ${MAX_BODY} bytes`));
          else chunks.push(c);
        });
        res.on('error', (e) => finish(e));
        res.on('end', () => {
          const location = typeof res.headers.location === 'string' ? res.headers.location : null;
          finish(null, { status: res.statusCode ?? 0, location, body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.end();
    };

    if (!proxy) {
      get(null);
      return;
    }
    const p = new URL(proxy.includes('://') ? proxy : `http://${proxy}`);
    if (p.protocol !== 'http:') {
      finish(new Error(`proxy ${withoutCredentials(proxy)}: only http:// proxies are supported`));
      return;
    }
    const headers: Record<string, string> = { host: `${target.hostname}:${port}` };
    if (p.username) headers['proxy-authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}`;
    const tunnel = httpRequest({ host: p.hostname, port: Number(p.port || 80), method: 'CONNECT', path: `${target.hostname}:${port}`, headers });
    open.push(tunnel);
    tunnel.on('error', (e) => finish(e));
    tunnel.on('connect', (res: IncomingMessage, socket: Socket) => {
      open.push(socket);
      if (res.statusCode !== 200) {
        finish(new Error(`the proxy answered HTTP ${res.statusCode} to CONNECT ${target.hostname}:${port}`));
        return;
      }
      if (!https) {
        get(socket);
        return;
      }
      const tls = tlsConnect({ socket, servername: target.hostname });
      open.push(tls);
      tls.on('error', (e) => finish(e));
      tls.once('secureConnect', () => get(tls));
    });
    tunnel.end();
  });
}

/** `url` with any user and password replaced by `***` (a proxy as the environment names it may carry both). */
export function withoutCredentials(url: string): string {
  let u: URL;
  try {
    u = new URL(url.includes('://') ? url : `http://${url}`);
  } catch {
    return url.includes('@') ? '(a proxy URL that does not parse)' : url;
  }
  if (!u.username && !u.password) return url;
  u.username = '***';
  u.password = '';
  return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}

/**
 * The proxy the environment names for this URL, null when none or when NO_PROXY lists its host (exactly, as a
 * domain suffix, or `*`).
 */
export function proxyFor(url: string, env: Env): string | null {
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
