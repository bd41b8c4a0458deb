// `cluster up/down --provider k3d` with stand-in k3d/kubectl/docker on PATH (they record their arguments; node
// "containers" are processes in their own network namespaces) and veth stand-in PFs known to a sysfs tree.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { DownSummary } from '../../src/cluster/orchestration/down';
import { loadConfig } from '../../src/config';
import { clusterDir } from '../../src/cluster/orchestration/state';
import { findRecords } from '../helpers/engine';
import { type FakeSysfs } from '../helpers/fake-sysfs';
import { ip, Scratch } from '../helpers/kernel';
import { nicState } from '../helpers/lend-fixture';
import { dockerApiStandIn } from '../helpers/docker-api';
import { calicoFixture, linksOfPid, partialBin, useProviderWorld, restoreEnv, sriovctl, Standins, type StandInPf } from './cluster-fixture';

let s: Scratch;
let sys: FakeSysfs;
let standins: Standins;
let name: string;
let work: string;
let pfs: StandInPf[];

const PFS = [{ suffix: 'pf0', bdf: '0000:3b:00.0' }, { suffix: 'pf1', bdf: '0000:3b:00.1' }];
useProviderWorld('k3d', PFS, { macPrefix: '02:5c:00:00', totalVfs: 8, mtu: 1450 }, (w) => ({ s, sys, standins, name, work, pfs } = w));

function upArgs(...extra: string[]): string[] {
  return ['cluster', 'up', '--provider', 'k3d', '--name', name, '--vfs', '3', '--manifests', join(work, 'm'), '--primary-cni', calicoFixture(work), '--vf-timeout', '10', ...extra];
}

function objectsOf(file: string): any[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8')) as any[];
  for (const d of docs) expect(d.errors).toEqual([]);
  return docs.map((d) => d.toJS());
}

/** A PF's VF count as its sysfs file says (the kernel prints it with a newline, a plain write may not). */
function numVfs(bdf: string): number {
  return Number(sys.sim.read(`${sys.sim.pciDir(bdf)}/sriov_numvfs`)!.trim());
}

describe('k3d provider', () => {
  it('creates the cluster with the exact arguments, lends a PF to each agent, labels, applies, waits for allocatable', async () => {
    process.env.STANDIN_ALLOCATABLE = '3';
    const up = await sriovctl(...upArgs());
    expect(up.stderr).not.toMatch(/warning|sriovctl: /);
    expect(up.code).toBe(0);

    const k3d = standins.calls('k3d').map((c) => c.args);
    const manifests = join(work, 'm');
    expect(k3d.find((a) => a[1] === 'create' && a[0] === 'registry')).toEqual(['registry', 'create', `${name}-registry`, '--port', '127.0.0.1:5000']);
    expect(k3d.find((a) => a[1] === 'create' && a[0] === 'cluster')).toEqual([
      'cluster', 'create', name,
      '--servers', '1',
      '--agents', '2',
      '--no-lb',
      '--registry-use', `k3d-${name}-registry:5000`,
      '--k3s-arg', '--flannel-backend=none@server:*',
      '--k3s-arg', '--disable-network-policy@server:*',
      '--k3s-arg', '--kubelet-arg=cpu-manager-policy=static@agent:*',
      '--k3s-arg', '--kubelet-arg=reserved-cpus=0@agent:*',
      '--volume', `${manifests}/00-primary-cni.yaml:/var/lib/rancher/k3s/server/manifests/sriovctl-primary-cni.yaml@server:0`,
      '--volume', `${stateDirOfTest()}:/var/lib/sriovctl@all`,
      // k3s of the Kubernetes the manifests are validated for (k3d's own default is older)
      '--image', 'docker.io/rancher/k3s:v1.33.1-k3s1',
      '--wait', '--timeout', '300s',
    ]);
    expect(k3d.findIndex((a) => a[0] === 'registry' && a[1] === 'create')).toBeLessThan(k3d.findIndex((a) => a[0] === 'cluster' && a[1] === 'create'));
    // the installer image is imported into the nodes right after the cluster exists (airgap)
    const created = k3d.findIndex((a) => a[0] === 'cluster' && a[1] === 'create');
    expect(k3d[created + 1]).toEqual(['image', 'import', standins.archive, '--cluster', name, '--mode', 'direct']);

    // the primary CNI handed to k3s: Calico on k3s's pod network
    const calico = objectsOf(join(manifests, '00-primary-cni.yaml'));
    expect(calico[1].spec.template.spec.containers[0].env).toContainEqual({ name: 'CALICO_IPV4POOL_CIDR', value: '10.42.0.0/16' });

    // nodes resolved to their container's pid through docker (auto-detected)
    const containers = standins.containers();
    expect(standins.calls('docker').filter((c) => c.args[0] === 'inspect').map((c) => c.args.at(-1)).sort()).toEqual([`k3d-${name}-agent-0`, `k3d-${name}-agent-1`]);
    for (const [i, pf] of pfs.entries()) {
      const pid = containers[`k3d-${name}-agent-${i}`];
      expect(linksOfPid(pid)).toEqual([pf.name]);
      expect(nicState(pf.name)).toBeNull();
      expect(numVfs(pf.bdf)).toBe(3);
    }
    expect(linksOfPid(containers[`k3d-${name}-server-0`])).toEqual([]);

    const kubectl = standins.calls('kubectl').map((c) => c.args);
    const ctx = ['--context', `k3d-${name}`, '--request-timeout=20s'];
    for (const i of [0, 1]) {
      expect(kubectl).toContainEqual([...ctx, 'label', 'node', `k3d-${name}-agent-${i}`, 'node-role.kubernetes.io/worker=', 'sriov_capable=true', '--overwrite']);
    }
    const files = ['10-multus.yaml', '20-sriov-device-plugin.yaml', '30-sriovctl-cni-installer.yaml', '40-network-attachment.yaml'];
    const applies = kubectl.filter((a) => a[3] === 'apply').map((a) => a[5]);
    expect(applies).toEqual(files.map((f) => join(manifests, f)));
    const waitCrd = kubectl.findIndex((a) => a[3] === 'wait');
    expect(kubectl[waitCrd]).toEqual([...ctx, 'wait', '--for', 'condition=established', '--timeout=60s', 'crd/network-attachment-definitions.k8s.cni.cncf.io']);
    expect(waitCrd).toBeLessThan(kubectl.findIndex((a) => a[5]?.endsWith('40-network-attachment.yaml')));
    // up waits for the component pods (one request over their labels) and the VFs of each agent
    expect(kubectl.filter((a) => a[3] === 'get').map((a) => a.slice(3))).toEqual([
      ['get', 'pods', '--namespace', 'kube-system', '--selector', 'app in (multus,sriovdp,sriovctl-cni-installer)', '--output', 'json'],
      ['get', 'node', `k3d-${name}-agent-0`, '-o', 'json'],
      ['get', 'node', `k3d-${name}-agent-1`, '-o', 'json'],
    ]);

    // the manifests, field by field
    const dp = objectsOf(join(manifests, '20-sriov-device-plugin.yaml'));
    const config = JSON.parse(dp.find((o) => o.kind === 'ConfigMap').data['config.json']);
    expect(config).toEqual({
      resourceList: [{ resourcePrefix: 'kubevirt.io', resourceName: 'sriov_net', selectors: { pfNames: pfs.map((p) => p.name) } }],
    });
    const [installer] = objectsOf(join(manifests, '30-sriovctl-cni-installer.yaml'));
    // the init container installs into the node's CNI bin dir; the daemon reads the IPAM plugins there, at its own path
    const volumes = installer.spec.template.spec.volumes;
    expect(volumes).toContainEqual({ name: 'cnibin', hostPath: { path: '/opt/cni/bin', type: 'DirectoryOrCreate' } });
    expect(volumes).toContainEqual({ name: 'cni-bin-host', hostPath: { path: '/opt/cni/bin', type: 'DirectoryOrCreate' } });
    expect(installer.spec.template.spec.nodeSelector).toBeUndefined();
    const arch = installer.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions;
    expect(arch).toContainEqual({ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] });
    const [nad] = objectsOf(join(manifests, '40-network-attachment.yaml'));
    expect(nad.metadata.annotations).toEqual({ 'k8s.v1.cni.cncf.io/resourceName': 'kubevirt.io/sriov_net' });
    expect(JSON.parse(nad.spec.config).type).toBe('sriovctl-cni');
    const multus = objectsOf(join(manifests, '10-multus.yaml'));
    expect(multus.map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ServiceAccount', 'DaemonSet']);

    // down gives every NIC back before the cluster is deleted, and never asks the Kubernetes API
    const kubectlBefore = standins.calls('kubectl').length;
    const down = await sriovctl('cluster', 'down', '--name', name, '--json');
    expect(down.code).toBe(0);
    const summary = JSON.parse(down.stdout) as DownSummary;
    expect(summary.nics.map((n) => [n.name, n.outcome, n.node])).toEqual(pfs.map((p, i) => [p.name, 'returned', `k3d-${name}-agent-${i}`]));
    expect(standins.calls('kubectl')).toHaveLength(kubectlBefore);
    const del = standins.calls('k3d').find((c) => c.args[0] === 'cluster' && c.args[1] === 'delete')!;
    expect(del.args).toEqual(['cluster', 'delete', name]);
    expect(del.recordsAtDelete).toBe(0);
    expect(del.linksAtDelete).toEqual({ [`k3d-${name}-server-0`]: [], [`k3d-${name}-agent-0`]: [], [`k3d-${name}-agent-1`]: [] });
    expect(standins.calls('k3d').at(-1)!.args).toEqual(['registry', 'delete', `k3d-${name}-registry`]);
    for (const pf of pfs) {
      expect(nicState(pf.name)).toEqual(pf.before);
      expect(numVfs(pf.bdf)).toBe(0);
    }
    expect(findRecords()).toEqual([]);
    expect(standins.containers()).toEqual({});
  });

  it('an agent whose VFs are not ready is not labelled nor selected by the device plugin; up exits 3', async () => {
    const [short] = s.veth('pf2', 'w2');
    ip('link', 'set', short, 'address', '02:5c:00:00:02:01');
    // a PF whose driver enables fewer VFs than asked (a firmware limit)
    sys.sim.addPf({ bdf: '0000:3b:00.2', totalVfs: 8, maxVfs: 1, netdev: { name: short, mac: '02:5c:00:00:02:01' } });
    process.env.STANDIN_ALLOCATABLE = '3';
    const up = await sriovctl(...upArgs('--pf', pfs[0].name, short));
    expect(up.code).toBe(3);
    expect(up.stderr).toMatch(new RegExp(`warning: agent k3d-${name}-agent-1: ${short} \\(0000:3b:00.2\\): .*asked for 3 VFs, obtained 1`));
    const labels = standins.calls('kubectl').filter((c) => c.args[3] === 'label').map((c) => c.args[5]);
    expect(labels).toEqual([`k3d-${name}-agent-0`]);
    expect(standins.calls('kubectl').filter((c) => c.args[3] === 'get' && c.args[4] === 'node').map((c) => c.args[5])).toEqual([`k3d-${name}-agent-0`]);
    const dp = objectsOf(join(work, 'm', '20-sriov-device-plugin.yaml'));
    expect(JSON.parse(dp.find((o) => o.kind === 'ConfigMap').data['config.json']).resourceList[0].selectors.pfNames).toEqual([pfs[0].name]);
    const st = JSON.parse((await sriovctl('cluster', 'status', '--name', name, '--json')).stdout);
    expect(st.nodes.find((n: any) => n.name === `k3d-${name}-agent-1`)).toMatchObject({ labels: {}, vfs: { asked: 3, ready: 1 } });
    // down still gives both PFs back
    const down = await sriovctl('cluster', 'down', '--name', name, '-q');
    expect(down.code).toBe(0);
    expect(nicState(pfs[0].name)).toEqual(pfs[0].before);
    expect(nicState(short)).toMatchObject({ mac: '02:5c:00:00:02:01' });
    expect(findRecords()).toEqual([]);
  });

  it('down works with the Kubernetes API unreachable', async () => {
    process.env.STANDIN_ALLOCATABLE = '3';
    expect((await sriovctl(...upArgs('-q'))).code).toBe(0);
    process.env.STANDIN_KUBE = 'unreachable';
    const down = await sriovctl('cluster', 'down', '--name', name);
    expect(down.stderr).toContain(`down ${name}: 2 NICs lent to its nodes`);
    expect(down.stderr).not.toContain('sriovctl:');
    expect(down.code).toBe(0);
    for (const pf of pfs) expect(down.stdout).toContain(`${pf.name} (${pf.bdf}): returned as ${pf.name} from k3d-${name}-agent-`);
    for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
    expect(findRecords()).toEqual([]);
    expect(standins.containers()).toEqual({});
  });

  it('allocatable never arrives: a clear timeout, and everything is rolled back', async () => {
    process.env.STANDIN_ALLOCATABLE = '1';
    const up = await sriovctl(...upArgs('--wait-timeout', '1'));
    expect(up.code).toBe(1);
    expect(up.stderr).toMatch(/timed out after 1 s waiting for the SR-IOV components: kubevirt\.io\/sriov_net not allocatable: k3d-\S+-agent-0 has 1 of 3, k3d-\S+-agent-1 has 1 of 3/);
    expect(up.stderr).toContain('(rolled back)');
    const del = standins.calls('k3d').find((c) => c.args[1] === 'delete' && c.args[0] === 'cluster')!;
    expect(del.recordsAtDelete).toBe(0);
    for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
    expect(findRecords()).toEqual([]);
    expect(existsSync(clusterDir(stateDirOfTest(), name))).toBe(false);
  });

  it('component pods not Ready: up fails naming each pod and its status as kubectl shows it, and rolls back', async () => {
    // the VFs are allocatable, but Multus crash-loops in its init container and the installer image is missing
    process.env.STANDIN_ALLOCATABLE = '3';
    const node = `k3d-${name}-agent-0`;
    const pods = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        initStuck('kube-multus-ds-x7k2p', 'multus', node, ['install-multus-binary', 'kube-multus'], { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' }),
        {
          metadata: { name: 'kube-sriov-device-plugin-m2d9q', labels: { app: 'sriovdp' } },
          spec: { nodeName: node },
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'kube-sriovdp', ready: true, state: { running: {} } }] },
        },
        initStuck('sriovctl-cni-installer-4kq8z', 'sriovctl-cni-installer', node, ['install-sriovctl-cni', 'sriovctl-daemon'], {
          reason: 'ImagePullBackOff',
          message: 'Back-off pulling image "docker.io/sriovctl/sriovctl-cni:0.1.0"',
        }),
      ],
    };
    process.env.STANDIN_PODS = join(work, 'pods.json');
    writeFileSync(process.env.STANDIN_PODS, JSON.stringify(pods));
    let up;
    try {
      up = await sriovctl(...upArgs('--wait-timeout', '1'));
    } finally {
      restoreEnv('STANDIN_PODS', undefined);
    }
    expect(up.code).toBe(1);
    const line = up.stderr.split('\n').find((l) => l.startsWith('sriovctl: '))!;
    expect(line).toBe(
      `sriovctl: cluster up ${name}: timed out after 1 s waiting for the SR-IOV components: ` +
        `pod kube-system/kube-multus-ds-x7k2p on node ${node}: Init:CrashLoopBackOff (back-off 40s restarting failed container); ` +
        `pod kube-system/sriovctl-cni-installer-4kq8z on node ${node}: Init:ImagePullBackOff (Back-off pulling image "docker.io/sriovctl/sriovctl-cni:0.1.0")` +
        ' (rolled back)',
    );
    for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
    expect(findRecords()).toEqual([]);
    expect(existsSync(clusterDir(stateDirOfTest(), name))).toBe(false);
  });

  it('a failed k3d cluster create is rolled back, nothing lent', async () => {
    process.env.STANDIN_FAIL = 'k3d-create';
    let up;
    try {
      up = await sriovctl(...upArgs());
    } finally {
      restoreEnv('STANDIN_FAIL', undefined);
    }
    expect(up.code).toBe(1);
    expect(up.stderr).toContain("Failed to create cluster");
    expect(standins.calls('k3d').some((c) => c.args[0] === 'registry' && c.args[1] === 'delete')).toBe(true);
    for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
    expect(findRecords()).toEqual([]);
  });

  it("refuses to create over someone else's cluster of the same name, and never deletes it", async () => {
    execFileSync('k3d', ['cluster', 'create', name, '--servers', '1', '--agents', '1'], { env: process.env });
    const up = await sriovctl(...upArgs());
    expect(up.code).toBe(1);
    expect(up.stderr).toContain(`  - a k3d cluster ${name} exists already (nodes k3d-${name}-agent-0, k3d-${name}-server-0)`);
    expect(standins.calls('k3d').filter((c) => c.args[1] === 'delete' || c.args[1] === 'create').map((c) => c.args.slice(0, 3))).toEqual([
      ['cluster', 'create', name],
    ]);
    expect(Object.keys(standins.containers()).sort()).toEqual([`k3d-${name}-agent-0`, `k3d-${name}-server-0`]);
    for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
    execFileSync('k3d', ['cluster', 'delete', name], { env: process.env });
  });

  it('podman when docker is absent: k3d is pointed at the Docker API socket of podman', async () => {
    const bin = partialBin(['k3d', 'kubectl', 'podman']);
    process.env.PATH = bin.path;
    process.env.STANDIN_ALLOCATABLE = '3';
    const api = await dockerApiStandIn(work);
    process.env.DOCKER_HOST = api.host;
    try {
      const up = await sriovctl(...upArgs('-q'));
      expect(up.stderr).toBe('');
      expect(up.code).toBe(0);
      // preflight asked the socket; every k3d call got DOCKER_HOST; the images went through podman
      expect(api.requests).toContain('GET /_ping');
      expect(standins.calls('k3d').length).toBeGreaterThan(0);
      expect(standins.calls('k3d').every((c) => c.dockerHost === api.host)).toBe(true);
      expect(standins.calls('podman').some((c) => c.args[0] === 'save')).toBe(true);
      expect(standins.calls('podman').filter((c) => c.args[0] === 'inspect').map((c) => c.args.slice(0, 4))).toEqual([
        ['inspect', '--type', 'container', '--format'],
        ['inspect', '--type', 'container', '--format'],
      ]);
      expect(standins.calls('docker')).toEqual([]);
      expect((await sriovctl('cluster', 'down', '--name', name, '-q')).code).toBe(0);
    } finally {
      restoreEnv('DOCKER_HOST', undefined);
      await api.close();
      bin.cleanup();
    }
  });

  it('podman without its Docker API socket: preflight says how to start it, nothing changes', async () => {
    const bin = partialBin(['k3d', 'kubectl', 'podman']);
    process.env.PATH = bin.path;
    process.env.DOCKER_HOST = `unix://${join(work, 'no-such.sock')}`;
    try {
      const up = await sriovctl(...upArgs('--runtime', 'podman'));
      expect(up.code).toBe(1);
      expect(up.stderr).toContain(`  - podman's Docker API socket ${join(work, 'no-such.sock')} does not exist: k3d reaches podman through it (start it with \`systemctl start podman.socket\``);
      expect(standins.calls('k3d').filter((c) => c.args[1] === 'create')).toEqual([]);
      for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
      expect(findRecords()).toEqual([]);
    } finally {
      restoreEnv('DOCKER_HOST', undefined);
      bin.cleanup();
    }
  });

  it('preflight names missing tools and a missing primary CNI manifest together', async () => {
    const bin = partialBin(['k3d']);
    // /usr/bin has a real kubectl on some machines (and /bin is /usr/bin): only our bin dir and /usr/sbin (ip)
    process.env.PATH = `${bin.dir}:/usr/sbin`;
    try {
      const up = await sriovctl('cluster', 'up', '--provider', 'k3d', '--name', name, '--primary-cni', join(work, 'nope.yaml'));
      expect(up.code).toBe(1);
      expect(up.stderr).toContain('  - kubectl is not installed (not on PATH)');
      expect(up.stderr).toContain('  - docker is not installed (not on PATH)');
      expect(up.stderr).toContain('  - no container runtime: neither docker nor podman is on PATH');
      expect(up.stderr).toMatch(/  - primary CNI manifest: cannot read \S+nope\.yaml/);
      expect(standins.calls()).toEqual([]);
    } finally {
      bin.cleanup();
    }
  });
});

/** A pod as the API shows it while its init container waits (`waiting`), the main one not started yet. */
function initStuck(name: string, app: string, node: string, [init, main]: string[], waiting: { reason: string; message: string }) {
  return {
    metadata: { name, labels: { app } },
    spec: { nodeName: node, initContainers: [{ name: init }] },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'Initialized', status: 'False' }, { type: 'Ready', status: 'False' }],
      initContainerStatuses: [{ name: init, state: { waiting } }],
      containerStatuses: [{ name: main, state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
}

/** The state dir this test gave its sriovctl processes (through the environment). */
function stateDirOfTest(): string {
  return loadConfig(process.env).stateDir;
}
