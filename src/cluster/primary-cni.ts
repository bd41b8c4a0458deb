// The primary CNI of a k3d cluster (k3s's flannel is off so that Multus has a plain delegate to wrap): Calico,
// fetched or read once in preflight, adapted to k3s (its pod CIDR, IP forwarding in containers) and handed to
// k3s's auto-deploy directory at create time.
import { readFile } from 'node:fs/promises';
import { SysError } from '../errors';
import { yaml } from './yaml';

/** Calico's own single-file manifest, pinned. */
export const DEFAULT_PRIMARY_CNI = 'https://raw.githubusercontent.com/projectcalico/calico/v3.28.2/manifests/calico.yaml';

/** k3s's default pod network. */
export const K3S_POD_CIDR = '10.42.0.0/16';

/** The manifest text behind a URL (bounded in time) or a file. */
export async function loadManifestSource(source: string, timeoutMs = 30_000): Promise<string> {
  const op = 'primary CNI manifest';
  if (/^https?:\/\//.test(source)) {
    let res: Response;
    try {
      res = await fetch(source, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw new SysError(`cannot fetch ${source}: ${(err as Error).message}`, { code: 'UNREACHABLE', op });
    }
    if (!res.ok) throw new SysError(`cannot fetch ${source}: HTTP ${res.status}`, { code: 'UNREACHABLE', op });
    return res.text();
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
