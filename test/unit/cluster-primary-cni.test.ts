import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { adaptCalicoForK3s } from '../../src/cluster/kubernetes/primary-cni';

const calico = `# a trimmed Calico manifest
kind: ConfigMap
apiVersion: v1
metadata:
  name: calico-config
  namespace: kube-system
data:
  cni_network_config: |-
    {
      "name": "k8s-pod-network",
      "cniVersion": "0.3.1",
      "plugins": [
        {
          "type": "calico",
          "mtu": __CNI_MTU__,
          "ipam": { "type": "calico-ipam" }
        }
      ]
    }
---
kind: DaemonSet
apiVersion: apps/v1
metadata:
  name: calico-node
  namespace: kube-system
spec:
  template:
    spec:
      containers:
        - name: calico-node
          image: docker.io/calico/node:v3.28.2
          env:
            - name: DATASTORE_TYPE
              value: "kubernetes"
            # - name: CALICO_IPV4POOL_CIDR
            #   value: "192.168.0.0/16"
---
kind: ServiceAccount
apiVersion: v1
metadata:
  name: calico-node
`;

function objects(text: string): any[] {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new Error('no docs');
  for (const d of docs) expect(d.errors).toEqual([]);
  return docs.map((d) => d.toJS());
}

describe('Calico adapted to k3s', () => {
  it("sets the pool to k3s's pod CIDR and allows forwarding in containers", () => {
    const out = objects(adaptCalicoForK3s(calico));
    expect(out.map((o) => o.kind)).toEqual(['ConfigMap', 'DaemonSet', 'ServiceAccount']);
    const cni = out[0].data.cni_network_config as string;
    expect(cni).toContain('"container_settings": { "allow_ip_forwarding": true }');
    const plugin = JSON.parse(cni.replace('__CNI_MTU__', '1500')).plugins[0];
    expect(plugin.container_settings).toEqual({ allow_ip_forwarding: true });
    expect(out[1].spec.template.spec.containers[0].env).toEqual([
      { name: 'DATASTORE_TYPE', value: 'kubernetes' },
      { name: 'CALICO_IPV4POOL_CIDR', value: '10.42.0.0/16' },
    ]);
  });

  it('is idempotent and replaces an existing pool CIDR', () => {
    const once = adaptCalicoForK3s(calico, '10.99.0.0/16');
    const twice = adaptCalicoForK3s(once, '10.42.0.0/16');
    const out = objects(twice);
    expect((out[0].data.cni_network_config as string).match(/container_settings/g)).toHaveLength(1);
    expect(out[1].spec.template.spec.containers[0].env.filter((e: any) => e.name === 'CALICO_IPV4POOL_CIDR')).toEqual([
      { name: 'CALICO_IPV4POOL_CIDR', value: '10.42.0.0/16' },
    ]);
  });

  it('passes other manifests through and rejects invalid YAML', () => {
    const other = 'kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\ndata:\n  a: b\n';
    expect(objects(adaptCalicoForK3s(other))).toEqual(objects(other));
    expect(() => adaptCalicoForK3s('a: [1, 2\n')).toThrow(/not valid YAML/);
  });
});
