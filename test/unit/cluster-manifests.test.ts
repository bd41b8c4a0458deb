import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { renderManifests, toYaml, writeManifests, SRIOV_RESOURCE, type ManifestInput } from '../../src/cluster/kubernetes/manifests';
import { admitCall, daemonCallConfig } from '../../src/daemon/caller-env';
import { pathsOfCall } from '../../src/daemon/caller-paths';
import { loadConfig } from '../../src/config';
import { k3dClusterCreateArgs } from '../../src/cluster/providers/k3d';
import { kindClusterConfig } from '../../src/cluster/providers/kind';
import type { CreateSpec } from '../../src/cluster/types';

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

const input: ManifestInput = {
  pfNames: ['enp3s0f0', 'enp4s0f0'],
  driver: 'vfio-pci',
  cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' },
};

const NODE_SPEC: CreateSpec = { name: 'lab', agents: 1, manifestsDir: '/tmp/m', driver: null, reservedCpus: '0', image: null, stateDir: '/var/lib/sriovctl' };

/** The objects of every file, as kubectl would read them back from the YAML text. */
function parsed(inp: ManifestInput): Record<string, any[]> {
  const out: Record<string, any[]> = {};
  for (const f of renderManifests(inp)) {
    const docs = parseAllDocuments(toYaml(f));
    if (!Array.isArray(docs)) throw new Error('no documents');
    for (const d of docs) expect(d.errors).toEqual([]);
    out[f.file] = docs.map((d) => d.toJS());
  }
  return out;
}

function daemonSets(all: Record<string, any[]>): any[] {
  return Object.values(all).flat().filter((o) => o.kind === 'DaemonSet');
}

describe('rendered manifests', () => {
  const all = parsed(input);

  it('are four files in apply order: Multus before the attachment that needs its CRD', () => {
    expect(Object.keys(all)).toEqual([
      '10-multus.yaml',
      '20-sriov-device-plugin.yaml',
      '30-sriovctl-cni-installer.yaml',
      '40-network-attachment.yaml',
    ]);
    const crd = all['10-multus.yaml'].find((o) => o.kind === 'CustomResourceDefinition');
    expect(crd.metadata.name).toBe('network-attachment-definitions.k8s.cni.cncf.io');
    expect(crd.spec.group).toBe('k8s.cni.cncf.io');
    expect(crd.spec.names.kind).toBe('NetworkAttachmentDefinition');
    expect(crd.spec.versions[0]).toMatchObject({ name: 'v1', served: true, storage: true });
  });

  it('Multus: thin plugin DaemonSet on the CNI directories, with its RBAC', () => {
    const m = all['10-multus.yaml'];
    expect(m.map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ServiceAccount', 'DaemonSet']);
    const ds = m[4];
    expect(ds.metadata).toMatchObject({ name: 'kube-multus-ds', namespace: 'kube-system' });
    const pod = ds.spec.template.spec;
    expect(pod.serviceAccountName).toBe('multus');
    expect(pod.hostNetwork).toBe(true);
    expect(pod.containers[0].command).toEqual(['/thin_entrypoint']);
    // the image is distroless: its own installer copies the thin plugin, never cp or a shell
    expect(pod.initContainers[0].command).toEqual(['/install_multus']);
    expect(pod.initContainers[0].args).toEqual(['--type', 'thin', '--dest-dir', '/host/opt/cni/bin']);
    expect(pod.containers[0].args).toContain('--multus-kubeconfig-file-host=/etc/cni/net.d/multus.d/multus.kubeconfig');
    expect(pod.volumes).toEqual([
      { name: 'cni', hostPath: { path: '/etc/cni/net.d' } },
      { name: 'cnibin', hostPath: { path: '/opt/cni/bin' } },
    ]);
    expect(m[2].subjects).toEqual([{ kind: 'ServiceAccount', name: 'multus', namespace: 'kube-system' }]);
    expect(ds.spec.selector.matchLabels).toEqual(ds.spec.template.metadata.labels);
  });

  it('device plugin config: resource kubevirt.io/sriov_net, every attached PF, the driver', () => {
    const cm = all['20-sriov-device-plugin.yaml'].find((o) => o.kind === 'ConfigMap');
    expect(cm.metadata).toEqual({ name: 'sriovdp-config', namespace: 'kube-system' });
    const config = JSON.parse(cm.data['config.json']);
    expect(config).toEqual({
      resourceList: [
        {
          resourcePrefix: 'kubevirt.io',
          resourceName: 'sriov_net',
          selectors: { pfNames: ['enp3s0f0', 'enp4s0f0'], drivers: ['vfio-pci'] },
        },
      ],
    });
    expect(`${config.resourceList[0].resourcePrefix}/${config.resourceList[0].resourceName}`).toBe(SRIOV_RESOURCE);
    const ds = all['20-sriov-device-plugin.yaml'].find((o) => o.kind === 'DaemonSet');
    expect(ds.spec.template.spec.nodeSelector).toEqual({ sriov_capable: 'true' });
    const cfgVol = ds.spec.template.spec.volumes.find((v: any) => v.name === 'config-volume');
    expect(cfgVol.configMap.name).toBe('sriovdp-config');
  });

  it('device plugin config without a driver selects any driver', () => {
    const cm = parsed({ ...input, driver: null })['20-sriov-device-plugin.yaml'].find((o) => o.kind === 'ConfigMap');
    expect(JSON.parse(cm.data['config.json']).resourceList[0].selectors).toEqual({ pfNames: ['enp3s0f0', 'enp4s0f0'] });
  });

  it('the installer installs with the image\'s own entry point (install-cni, no shell) into the node\'s /opt/cni/bin, and no other image', () => {
    const [ds] = all['30-sriovctl-cni-installer.yaml'];
    expect(ds.kind).toBe('DaemonSet');
    const pod = ds.spec.template.spec;
    const image = `docker.io/sriovctl/sriovctl-cni:${PACKAGE_VERSION}`;
    const [init] = pod.initContainers;
    expect(pod.initContainers).toHaveLength(1);
    expect(init.volumeMounts).toEqual([{ name: 'cnibin', mountPath: '/host/opt/cni/bin' }]);
    expect(pod.volumes).toContainEqual({ name: 'cnibin', hostPath: { path: '/opt/cni/bin', type: 'DirectoryOrCreate' } });
    // the entry point (`sriovctl install-cni --to /host/opt/cni/bin`) of the image npm run package builds, imported
    expect(init.command).toBeUndefined();
    expect(init.args).toEqual([]);
    for (const c of [init, ...pod.containers]) {
      expect(c.image).toBe(image);
      expect(c.imagePullPolicy).toBe('IfNotPresent');
    }
    // no dependency on the pod network it helps to build
    expect(pod.hostNetwork).toBe(true);
  });

  it('the installer\'s main container is the resident daemon, the Multus-thick way: the node\'s view, its socket dir, ledger, netns dir, CNI dirs', () => {
    const pod = all['30-sriovctl-cni-installer.yaml'][0].spec.template.spec;
    expect(pod.containers).toHaveLength(1);
    const [daemon] = pod.containers;
    expect(daemon.command).toEqual(['/sriovctl', 'daemon']);
    expect(daemon.args).toBeUndefined();
    expect(daemon.securityContext).toEqual({ privileged: true });
    expect([pod.hostNetwork, pod.hostPID]).toEqual([true, true]);
    // Ready once the socket answers; the probe is the image's executable (the image has no shell)
    expect(daemon.readinessProbe.exec.command).toEqual(['/sriovctl', 'daemon', '--probe']);
    // each host dir at its own path: the daemon acts on the paths the runtime and the one-shot plugin use
    const volume = (name: string) => pod.volumes.find((v: any) => v.name === name).hostPath.path;
    const mounts = Object.fromEntries(daemon.volumeMounts.map((m: any) => [m.mountPath, { ...m, host: volume(m.name) }]));
    for (const [path, m] of Object.entries<any>(mounts)) expect(m.host, path).toBe(path);
    expect(Object.keys(mounts).sort()).toEqual(['/opt/cni/bin', '/run/sriovctl', '/sys', '/var/lib/cni/networks', '/var/lib/sriovctl', '/var/log', '/var/run/netns']);
    // every dir of the daemon's own configuration is a host dir mounted at its path, so no call of a node is sent
    // back to the one-shot plugin for a dir the container does not share
    const env = Object.fromEntries(daemon.env.map((e: any) => [e.name, e.value]));
    const own = admitCall({ CNI_COMMAND: 'ADD', CNI_NETNS: '/proc/1/ns/net' }, daemonCallConfig(env));
    expect(own.admitted).toBe(true);
    const paths = pathsOfCall(own.env);
    expect(paths.length).toBeGreaterThan(2);
    for (const p of paths) expect(Object.keys(mounts).some((m) => p === m || p.startsWith(`${m}/`)), p).toBe(true);
    expect(mounts['/var/run/netns'].mountPropagation).toBe('HostToContainer');
    expect(mounts['/opt/cni/bin'].readOnly).toBe(true);
  });

  it.each([
    ['k3d', (stateDir: string) => {
      const args = k3dClusterCreateArgs({ ...NODE_SPEC, stateDir }, { registryPort: 5000 });
      const ledger = args.flatMap((a, i) => (a === '--volume' && args[i + 1].startsWith(`${stateDir}:`) ? [args[i + 1]] : []));
      expect(ledger).toHaveLength(1);
      return ledger[0].slice(stateDir.length + 1).replace(/@all$/, '');
    }],
    ['kind', (stateDir: string) => {
      const mounts = (kindClusterConfig({ ...NODE_SPEC, stateDir }) as any).nodes.flatMap((n: any) => n.extraMounts);
      const ledger = [...new Set(mounts.filter((m: any) => m.hostPath === stateDir).map((m: any) => m.containerPath))];
      expect(ledger).toHaveLength(1);
      return ledger[0] as string;
    }],
  ])("%s with --state-dir: the daemon and the node's one-shot plugin both use the node path the host's state dir is mounted at", (_provider, nodePathOf) => {
    const inNode = nodePathOf('/srv/lab-state');
    const pod = all['30-sriovctl-cni-installer.yaml'][0].spec.template.spec;
    const [daemon] = pod.containers;
    const env = Object.fromEntries(daemon.env.map((e: any) => [e.name, e.value]));
    // the daemon's state dir is its own configuration; the one-shot plugin's comes from the runtime's environment,
    // which `cluster up` does not set: both must be the node path of the host's ledger, unconfigured
    expect(daemonCallConfig(env).config.stateDir).toBe(inNode);
    expect(loadConfig({}).stateDir).toBe(inNode);
    const mount = daemon.volumeMounts.find((m: any) => m.mountPath === inNode);
    expect(pod.volumes.find((v: any) => v.name === mount.name).hostPath.path).toBe(inNode);
  });

  it('--sriov-cni-name: the installer installs the plugin under that name too, and the attachment uses it', () => {
    const named = parsed({ ...input, sriovCniName: 'sriov' });
    const pod = named['30-sriovctl-cni-installer.yaml'][0].spec.template.spec;
    expect(pod.initContainers[0].args).toEqual(['--also-as', 'sriov']);
    expect(JSON.parse(named['40-network-attachment.yaml'][0].spec.config).type).toBe('sriov');
  });

  it('every DaemonSet runs on amd64 and arm64 (no amd64-only node selector) and tolerates taints', () => {
    const sets = daemonSets(all);
    expect(sets).toHaveLength(3);
    for (const ds of sets) {
      const pod = ds.spec.template.spec;
      expect(pod.nodeSelector?.['kubernetes.io/arch']).toBeUndefined();
      expect(pod.nodeSelector?.['beta.kubernetes.io/arch']).toBeUndefined();
      const terms = pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
      expect(terms).toHaveLength(1);
      const arch = terms[0].matchExpressions.find((e: any) => e.key === 'kubernetes.io/arch');
      expect(arch).toEqual({ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] });
      expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    }
  });

  it('the NetworkAttachmentDefinition uses sriovctl-cni for the device plugin resource', () => {
    const [nad] = all['40-network-attachment.yaml'];
    expect(nad.apiVersion).toBe('k8s.cni.cncf.io/v1');
    expect(nad.kind).toBe('NetworkAttachmentDefinition');
    expect(nad.metadata).toEqual({
      name: 'sriov-net',
      namespace: 'default',
      annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'kubevirt.io/sriov_net' },
    });
    const config = JSON.parse(nad.spec.config);
    expect(config).toEqual({ cniVersion: '1.0.0', name: 'sriov-net', type: 'sriovctl-cni', ipam: { type: 'host-local', subnet: '10.56.0.0/16' } });
  });

  it('follow the provider CNI directories and image overrides', () => {
    const other = parsed({ ...input, cni: { binDir: '/usr/libexec/cni', confDir: '/etc/kubernetes/cni/net.d' }, images: { cniInstaller: 'reg/x:1' } });
    const ds = other['30-sriovctl-cni-installer.yaml'][0];
    expect(ds.spec.template.spec.volumes[0].hostPath.path).toBe('/usr/libexec/cni');
    expect(ds.spec.template.spec.initContainers[0].image).toBe('reg/x:1');
    const multus = other['10-multus.yaml'][4];
    expect(multus.spec.template.spec.volumes.map((v: any) => v.hostPath.path)).toEqual(['/etc/kubernetes/cni/net.d', '/usr/libexec/cni']);
  });

  it('are written as files that parse back to the same objects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sriovctl-manifests-'));
    try {
      const files = renderManifests(input);
      const paths = await writeManifests(dir, files);
      expect(paths).toEqual(files.map((f) => join(dir, f.file)));
      for (const [i, p] of paths.entries()) {
        const docs = parseAllDocuments(readFileSync(p, 'utf8'));
        if (!Array.isArray(docs)) throw new Error('no documents');
        expect(docs.map((d) => d.toJS())).toEqual(files[i].objects);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
