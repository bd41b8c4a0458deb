// The primary CNI of a cluster. By default the provider's own network (k3s's flannel, kind's kindnet): it is
// built into the node image, so nothing is downloaded and no image beyond the node's is needed — airgap as is.
// `--primary-cni <file|url>` replaces it: read (or fetched through the environment's proxy) once in preflight,
// adapted to k3s when it is Calico, handed to k3s's auto-deploy directory (k3d) or applied after create (kind).
import { readFile } from 'node:fs/promises';
import type { Env } from '../../config';
import { SysError } from '../../errors';
import { fetchText } from '../tools/http-fetch';
import { yaml } from './yaml';

/** k3s's default pod network. */
export const K3S_POD_CIDR = '10.42.0.0/16';

export function isUrl(source: string): boolean {
  return /^https?:\/\//.test(source);
}

/** The manifest text behind a URL (bounded in time, through the proxy `env` names: the front door's) or a file. */
export async function loadManifestSource(source: string, opts: { env: Env; airgap?: boolean; timeoutMs?: number }): Promise<string> {
  const op = 'primary CNI manifest';
  if (isUrl(source)) {
    if (opts.airgap) {
      throw new SysError(`${source} is a URL and --airgap never uses the network: give a file`, { code: 'INVALID', op });
    }
    return fetchText(source, { timeoutMs: opts.timeoutMs ?? 30_000, op, env: opts.env });
  }
  try {
    return await readFile(source, 'utf8');
  } catch (err) {
    throw new SysError(`cannot read ${source}: ${(err as Error).message}`, { code: 'NOT_FOUND', op });
  }
}

/**
 * Calico adapted to k3s: the IPv4 pool is k3s's cluster CIDR, and containers may forward (k3s's own guidance).
 * Documents that are not Calico's are passed through unchanged, so another primary CNI can be supplied.
 */
export function adaptCalicoForK3s(text: string, podCidr = K3S_POD_CIDR): string {
  const docs = yaml().parseAllDocuments(text);
  if (!Array.isArray(docs)) return text;
  const out: string[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new SysError(`primary CNI manifest is not valid YAML: ${doc.errors[0].message}`, { code: 'INVALID', op: 'primary CNI manifest' });
    }
    const obj = doc.toJS() as Record<string, any> | null;
    if (obj?.kind === 'ConfigMap' && obj.metadata?.name === 'calico-config') {
      const cniConfig = doc.getIn(['data', 'cni_network_config']);
      if (typeof cniConfig === 'string' && !cniConfig.includes('container_settings')) {
        doc.setIn(
          ['data', 'cni_network_config'],
          cniConfig.replace(/^([ \t]*)("type":\s*"calico",)/m, '$1$2\n$1"container_settings": { "allow_ip_forwarding": true },'),
        );
      }
    }
    if (obj?.kind === 'DaemonSet' && obj.metadata?.name === 'calico-node') {
      const containers: any[] = obj.spec?.template?.spec?.containers ?? [];
      const i = containers.findIndex((c) => c.name === 'calico-node');
      if (i >= 0) {
        const env: any[] = containers[i].env ?? [];
        const j = env.findIndex((e) => e.name === 'CALICO_IPV4POOL_CIDR');
        const path = ['spec', 'template', 'spec', 'containers', i, 'env'];
        if (j >= 0) doc.setIn([...path, j, 'value'], podCidr);
        else doc.addIn(path, doc.createNode({ name: 'CALICO_IPV4POOL_CIDR', value: podCidr }));
      }
    }
    // each document keeps its own '---' marker from the source: drop it, the join puts one between documents
    if (obj !== null) out.push(doc.toString().replace(/^---\n/, ''));
  }
  return out.join('---\n');
}

/** The objects of a manifest (for the images it runs); null documents are skipped. */
export function manifestObjects(text: string): unknown[] {
  const docs = yaml().parseAllDocuments(text);
  return (Array.isArray(docs) ? docs : []).map((d) => d.toJS() as unknown).filter((o) => o !== null);
}
