// `cluster up/down --provider kind` with stand-in kind/kubectl/docker/podman on PATH (they record their arguments;
// node "containers" are processes in their own network namespaces) and veth stand-in PFs known to a sysfs tree.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KIND_NODE_IMAGE } from '../../src/cluster/kubernetes/version';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { findRecords } from '../helpers/engine';
import { loadConfig } from '../../src/config';
import { type FakeSysfs } from '../helpers/fake-sysfs';
import { nicState } from '../helpers/lend-fixture';
import { archiveFileName, imagesOf } from '../../src/cluster/kubernetes/images';
import { renderManifests } from '../../src/cluster/kubernetes/manifests';
import { installerImage } from '../../src/install/installer-image';
import { calicoFixture, linksOfPid, useProviderWorld, sriovctl, Standins, type StandInPf } from './cluster-fixture';

let sys: FakeSysfs;
let standins: Standins;
let name: string;
let work: string;
let pfs: StandInPf[];

const PFS = [{ suffix: 'pf0', bdf: '0000:5e:00.0' }, { suffix: 'pf1', bdf: '0000:5e:00.1' }];
const OPTIONS = { macPrefix: '02:5d:00:00', totalVfs: 4, drivers: ['vfio-pci'], env: { STANDIN_ALLOCATABLE: '2' } };
useProviderWorld('kind', PFS, OPTIONS, (w) => ({ sys, standins, name, work, pfs } = w));

describe('kind provider', () => {
  it('generates the cluster config, binds VFs to vfio-pci, and gives every NIC back before deleting the cluster', async () => {
    const manifests = join(work, 'm');
    const up = await sriovctl('cluster', 'up', '--provider', 'kind', '--name', name, '--vfs', '2', '--driver', 'vfio-pci', '--manifests', manifests, '--vf-timeout', '10');
    expect(up.stderr).not.toMatch(/warning|sriovctl: /);
    expect(up.code).toBe(0);

    const create = standins.calls('kind').find((c) => c.args[0] === 'create')!;
    expect(create.args).toEqual(['create', 'cluster', '--name', name, '--config', join(manifests, 'kind-config.yaml'), '--wait', '300s']);
    // the installer image is loaded into the nodes right after the cluster exists (airgap)
    const kindCalls = standins.calls('kind').map((c) => c.args);
    expect(kindCalls[kindCalls.findIndex((a) => a[0] === 'create') + 1]).toEqual(['load', 'image-archive', standins.archive, '--name', name]);
    const config = parse(readFileSync(join(manifests, 'kind-config.yaml'), 'utf8'));
    // one ledger: the host's state dir in every node at the default one, where the node's plugin and daemon look
    const stateDir = loadConfig(process.env).stateDir;
    const ledgerMount = { hostPath: stateDir, containerPath: '/var/lib/sriovctl' };
    expect(config.kind).toBe('Cluster');
    expect(config.apiVersion).toBe('kind.x-k8s.io/v1alpha4');
    expect(config.name).toBe(name);
    expect(config.nodes.map((n: any) => n.role)).toEqual(['control-plane', 'worker', 'worker']);
    // kind v0.29.0's node image, pinned whatever kind is installed: the Kubernetes the manifests are validated for
    for (const node of config.nodes) expect(node.image).toBe('kindest/node:v1.33.1@sha256:050072256b9a903bd914c0b2866828150cb229cea0efe5892e2b644d5dd3b34f');
    for (const worker of config.nodes.slice(1)) {
      expect(parse(worker.kubeadmConfigPatches[0])).toEqual({
        kind: 'JoinConfiguration',
        nodeRegistration: { kubeletExtraArgs: { 'cpu-manager-policy': 'static', 'reserved-cpus': '0' } },
      });
      expect(worker.extraMounts).toEqual([ledgerMount, { hostPath: '/dev/vfio', containerPath: '/dev/vfio' }]);
    }
    expect(config.nodes[0].extraMounts).toEqual([ledgerMount]);

    const containers = standins.containers();
    for (const [i, pf] of pfs.entries()) {
      const node = i === 0 ? `${name}-worker` : `${name}-worker2`;
      expect(linksOfPid(containers[node])).toEqual([pf.name]);
      const vfs = sys.sim.vfAddresses(pf.bdf);
      expect(vfs).toHaveLength(2);
      for (const vf of vfs) expect(sys.sim.readLinkName(`${sys.sim.pciDir(vf)}/driver`)).toBe('vfio-pci');
    }
    const kubectl = standins.calls('kubectl').map((c) => c.args);
    expect(kubectl.every((a) => a[0] === '--context' && a[1] === `kind-${name}`)).toBe(true);
    expect(kubectl.filter((a) => a[3] === 'label').map((a) => a[5])).toEqual([`${name}-worker`, `${name}-worker2`]);

    const dp = (parseAllDocuments(readFileSync(join(manifests, '20-sriov-device-plugin.yaml'), 'utf8')) as any[]).map((d) => d.toJS());
    expect(JSON.parse(dp[0].data['config.json']).resourceList[0].selectors).toEqual({ pfNames: pfs.map((p) => p.name), drivers: ['vfio-pci'] });

    const down = await sriovctl('cluster', 'down', '--name', name, '-q');
    expect(down.stderr).toBe('');
    expect(down.code).toBe(0);
    const calls = standins.calls('kind');
    const del = calls.find((c) => c.args[0] === 'delete')!;
    expect(del.args).toEqual(['delete', 'cluster', '--name', name]);
    expect(del.recordsAtDelete).toBe(0);
    expect(del.linksAtDelete).toEqual({ [`${name}-control-plane`]: [], [`${name}-worker`]: [], [`${name}-worker2`]: [] });
    for (const pf of pfs) {
      expect(nicState(pf.name)).toEqual(pf.before);
      expect(sys.sim.vfAddresses(pf.bdf)).toEqual([]);
    }
    expect(findRecords()).toEqual([]);
  });

  it('--runtime podman reaches kind (KIND_EXPERIMENTAL_PROVIDER) and resolves nodes through podman', async () => {
    const up = await sriovctl('cluster', 'up', '--provider', 'kind', '--runtime', 'podman', '--name', name, '--agents', '1', '--vfs', '2', '--manifests', join(work, 'm'), '-q');
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    expect(standins.calls('kind').every((c) => c.provider === 'podman')).toBe(true);
    expect(standins.calls('podman').filter((c) => c.args[0] === 'inspect').map((c) => c.args.at(-1))).toEqual([`${name}-worker`]);
    // the images were pulled and saved by podman too (a docker-archive: what kind loads)
    expect(standins.calls('podman').filter((c) => c.args[0] === 'save').every((c) => c.args.includes('docker-archive'))).toBe(true);
    expect(standins.calls('docker')).toEqual([]);
    const down = await sriovctl('cluster', 'down', '--name', name, '--runtime', 'podman', '-q');
    expect(down.code).toBe(0);
    expect(standins.calls('kind').at(-1)).toMatchObject({ args: ['delete', 'cluster', '--name', name], provider: 'podman' });
  });

  it('-f cluster.yaml: airgap from its archives on podman, its kind config merged, a primary CNI instead of kindnet; flags override the file', async () => {
    const images = join(work, 'images');
    mkdirSync(images);
    // one docker-archive per image the cluster runs (the components', Calico's), named after its reference
    const refs = [
      ...imagesOf(renderManifests({ pfNames: ['x'], driver: null, cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' } }).flatMap((f) => f.objects)),
      'docker.io/calico/node:v3.28.2',
    ].filter((r) => r !== installerImage());
    for (const ref of refs) {
      writeFileSync(join(work, 'manifest.json'), JSON.stringify([{ RepoTags: [ref] }]));
      execFileSync('tar', ['-cf', join(images, archiveFileName(ref)), '-C', work, 'manifest.json']);
    }
    calicoFixture(work);
    const file = join(work, 'cluster.yaml');
    writeFileSync(
      file,
      `apiVersion: sriovctl/v1alpha1
kind: Cluster
metadata:
  name: ${name}
spec:
  provider: kind
  runtime: podman
  agents: 2
  vfs: 2
  primaryCni: calico-mini.yaml
  images:
    archives: images
    airgap: true
  kind:
    apiVersion: kind.x-k8s.io/v1alpha4
    kind: Cluster
    networking:
      podSubnet: 10.244.0.0/16
    featureGates:
      CPUManagerPolicyAlphaOptions: true
`,
    );
    const manifests = join(work, 'm');
    // the node image is in podman's store already (airgap preflight checks the provider's default too)
    execFileSync('podman', ['pull', DEFAULT_KIND_NODE_IMAGE], { env: process.env });
    const podmanBefore = standins.calls('podman').length;
    process.env.STANDIN_OFFLINE = '1';
    let up;
    try {
      up = await sriovctl('cluster', 'up', '-f', file, '--agents', '1', '--manifests', manifests, '--vf-timeout', '10', '-q');
    } finally {
      delete process.env.STANDIN_OFFLINE;
    }
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);

    const kind = standins.calls('kind');
    expect(kind.every((c) => c.provider === 'podman')).toBe(true);
    const create = kind.find((c) => c.args[0] === 'create')!.args;
    // no --wait: without kindnet the nodes are Ready only once the primary CNI runs
    expect(create).toEqual(['create', 'cluster', '--name', name, '--config', join(manifests, 'kind-config.yaml')]);
    const config = parse(readFileSync(join(manifests, 'kind-config.yaml'), 'utf8'));
    expect(config.networking).toEqual({ podSubnet: '10.244.0.0/16', disableDefaultCNI: true });
    expect(config.featureGates).toEqual({ CPUManagerPolicyAlphaOptions: true });
    expect(config.nodes.map((n: any) => n.role)).toEqual(['control-plane', 'worker']);
    const loaded = kind.filter((c) => c.args[0] === 'load').map((c) => c.args);
    expect(loaded.map((a) => a[2]).sort()).toEqual([standins.archive, ...readdirSync(images).map((f) => join(images, f))].sort());
    for (const a of loaded) expect(a).toEqual(['load', 'image-archive', a[2], '--name', name]);
    expect(standins.calls('podman').slice(podmanBefore).filter((c) => c.args[0] === 'pull' || c.args[0] === 'save')).toEqual([]);
    // the primary CNI is applied first, adapted to kind's pod subnet
    const applies = standins.calls('kubectl').filter((c) => c.args[3] === 'apply').map((c) => c.args[5]);
    expect(applies[0]).toBe(join(manifests, '00-primary-cni.yaml'));
    const calico = (parseAllDocuments(readFileSync(applies[0], 'utf8')) as any[]).map((d) => d.toJS());
    expect(calico[1].spec.template.spec.containers[0].env).toContainEqual({ name: 'CALICO_IPV4POOL_CIDR', value: '10.244.0.0/16' });

    // down asks the runtime the cluster was made on (docker is on PATH too, and would be found first)
    expect((await sriovctl('cluster', 'down', '--name', name, '-q')).code).toBe(0);
    expect(standins.calls('kind').at(-1)).toMatchObject({ args: ['delete', 'cluster', '--name', name], provider: 'podman' });
    expect(nicState(pfs[0].name)).toEqual(pfs[0].before);
    expect(findRecords()).toEqual([]);
  });

  it('-f cluster.yaml: an unknown key is refused with its path before anything is done', async () => {
    const file = join(work, 'cluster.yaml');
    writeFileSync(file, `apiVersion: sriovctl/v1alpha1\nkind: Cluster\nspec:\n  provider: kind\n  agnets: 2\n`);
    const up = await sriovctl('cluster', 'up', '-f', file);
    expect(up.stderr).toContain(`sriovctl: cluster up: ${file}: spec.agnets: unknown key`);
    expect(up.stderr.trim().split('\n')).toHaveLength(1);
    expect(up.code).not.toBe(0);
    expect(standins.calls()).toEqual([]);
  });
});
