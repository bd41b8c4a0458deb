// The test cluster's certificates, made with openssl when the cluster starts (nothing is kept between runs): one CA,
// the API server's and the kubelet's serving certificates for 127.0.0.1, client certificates for the admin (the
// tests, the controller manager, the scheduler, Multus) and for the node's kubelet, and the service-account key.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  ca: KeyPair;
  apiServer: KeyPair;
  /** Client certificate in group system:masters. */
  admin: KeyPair;
  /** The kubelet's client certificate (system:node:<node>, group system:nodes): the Node authorizer's subject. */
  kubeletClient: KeyPair;
  kubeletServing: KeyPair;
  /** Signs and checks service-account tokens. */
  serviceAccount: { key: string; pub: string };
}

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

/** A key and a certificate signed by `ca`, with `subject` and, for serving certificates, `sans`. */
function issue(dir: string, name: string, ca: KeyPair, subject: string, usage: 'client' | 'server', sans: string[] = []): KeyPair {
  const pair = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', pair.key, '-subj', subject, '-out', csr);
  writeFileSync(
    ext,
    [
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature, keyEncipherment',
      `extendedKeyUsage = ${usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
      ...(sans.length ? [`subjectAltName = ${sans.join(', ')}`] : []),
    ].join('\n'),
  );
  openssl('x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', pair.cert);
  return pair;
}

export function makePki(dir: string, nodeName: string): Pki {
  mkdirSync(dir, { recursive: true });
  const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', ca.key, '-subj', '/CN=sriovctl-test-ca', '-days', '2', '-out', ca.cert);
  const serviceAccount = { key: join(dir, 'sa.key'), pub: join(dir, 'sa.pub') };
  openssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccount.key);
  openssl('pkey', '-in', serviceAccount.key, '-pubout', '-out', serviceAccount.pub);
  return {
    dir,
    ca,
    // 10.0.0.1: the `kubernetes` service's address in the cluster's service range (see cluster.ts)
    apiServer: issue(dir, 'apiserver', ca, '/CN=kube-apiserver', 'server', ['IP:127.0.0.1', 'IP:10.0.0.1', 'DNS:localhost', 'DNS:kubernetes.default.svc']),
    admin: issue(dir, 'admin', ca, '/O=system:masters/CN=sriovctl-test-admin', 'client'),
    kubeletClient: issue(dir, 'kubelet-client', ca, `/O=system:nodes/CN=system:node:${nodeName}`, 'client'),
    kubeletServing: issue(dir, 'kubelet-serving', ca, `/CN=${nodeName}`, 'server', ['IP:127.0.0.1', `DNS:${nodeName}`]),
    serviceAccount,
  };
}

/** A kubeconfig for `user` at `server`, with file references (kubelet, Multus and the controllers read it). */
export function kubeconfig(server: string, ca: string, user: KeyPair): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority': ca } }],
    users: [{ name: 'user', user: { 'client-certificate': user.cert, 'client-key': user.key } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'user' } }],
    'current-context': 'test',
  });
}
