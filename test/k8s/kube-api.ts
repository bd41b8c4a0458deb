// What the tests ask of the API server, through its REST API with the admin's client certificate (no kubectl):
// create the objects of a manifest, read, patch and delete them, and wait for a condition by polling.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { KeyPair } from './pki';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: any,
    what: string,
  ) {
    super(`${what}: HTTP ${status}: ${typeof body === 'object' ? (body?.message ?? JSON.stringify(body)) : body}`);
  }
}

/** kind -> the resource's plural, for the kinds the tests create (core and the groups the manifests use). */
const PLURALS: Record<string, string> = {
  Namespace: 'namespaces',
  Pod: 'pods',
  ServiceAccount: 'serviceaccounts',
  ConfigMap: 'configmaps',
  Event: 'events',
  Node: 'nodes',
  DaemonSet: 'daemonsets',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  CustomResourceDefinition: 'customresourcedefinitions',
  NetworkAttachmentDefinition: 'network-attachment-definitions',
};
const CLUSTER_SCOPED = new Set(['Namespace', 'Node', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

/** The collection path of `kind` in `apiVersion` (in `namespace` if it is namespaced). */
export function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
  const plural = PLURALS[kind];
  if (!plural) throw new Error(`kube-api: no plural known for kind ${kind}`);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = CLUSTER_SCOPED.has(kind) ? '' : `/namespaces/${namespace ?? 'default'}`;
  return `${base}${ns}/${plural}`;
}

/** Thrown by a waitFor probe: the condition can no longer come true, stop waiting. */
export class FatalWait extends Error {}

export class KubeApi {
  private readonly ca: Buffer;
  private readonly cert: Buffer;
  private readonly key: Buffer;

  constructor(
    readonly server: string,
    ca: string,
    user: KeyPair,
  ) {
    this.ca = readFileSync(ca);
    this.cert = readFileSync(user.cert);
    this.key = readFileSync(user.key);
  }

  /** One request; the parsed JSON answer, or an ApiError for any status >= 300. */
  call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<any> {
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          ca: this.ca,
          cert: this.cert,
          key: this.key,
          // Content-Length stated: for a DELETE, Node sends a body with neither it nor chunked encoding, and the API
          // server reads no body (DeleteOptions ignored: a grace period of 0 became the pod's own)
          headers: { Accept: 'application/json', ...(payload ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) } : {}) },
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: any = text;
            try {
              parsed = text ? JSON.parse(text) : null;
            } catch {
              // not JSON (e.g. /healthz): the text itself
            }
            if ((res.statusCode ?? 0) >= 300) reject(new ApiError(res.statusCode ?? 0, parsed, `${method} ${path}`));
            else resolve(parsed);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(path: string): Promise<any> {
    return this.call('GET', path);
  }

  /** Create `obj` (its apiVersion, kind and metadata.namespace say where). */
  create(obj: any): Promise<any> {
    return this.call('POST', collectionPath(obj.apiVersion, obj.kind, obj.metadata?.namespace), obj);
  }

  /** The path of one object. */
  objectPath(apiVersion: string, kind: string, name: string, namespace?: string): string {
    return `${collectionPath(apiVersion, kind, namespace)}/${name}`;
  }

  /** DELETE with `gracePeriodSeconds` (0 with force is `kubectl delete --grace-period=0 --force`). */
  delete(path: string, gracePeriodSeconds?: number): Promise<any> {
    const body = gracePeriodSeconds === undefined ? undefined : { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds };
    return this.call('DELETE', path, body);
  }

  /** GET that answers null for 404. */
  async find(path: string): Promise<any> {
    try {
      return await this.get(path);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }

  /** The Events whose involvedObject is the named object, oldest first. */
  async events(namespace: string, kind: string, name: string): Promise<any[]> {
    const selector = encodeURIComponent(`involvedObject.kind=${kind},involvedObject.name=${name}`);
    const list = await this.get(`/api/v1/namespaces/${namespace}/events?fieldSelector=${selector}`);
    return list.items;
  }

  /**
   * Poll `probe` until it returns a value other than undefined (its answer); `what` and the last value or error
   * go into the failure after `timeoutMs`. The bound guards against a hang on a loaded machine, it is no check.
   */
  async waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      try {
        const v = await probe();
        if (v !== undefined) return v;
        last = undefined;
      } catch (err) {
        if (err instanceof FatalWait) throw err;
        last = err;
      }
      if (Date.now() > end) throw new Error(`waiting for ${what}: not within ${timeoutMs} ms${last ? ` (last: ${(last as Error).message ?? last})` : ''}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
