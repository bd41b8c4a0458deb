// The stand-ins of test/fixtures/bin fail like the tools they stand in for: each accepts exactly the subcommands
// and flags of the version it pins (k3d v5.8.3, kind v0.29.0, kubectl v1.33.1, docker 20.10, podman 4.3) and
// refuses anything else with that tool's words and exit code — so a provider that passes a flag the real tool
// does not know fails here as it would on a real machine. Malformed image references are refused too.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { k3dClusterCreateArgs, k3dImageImportArgs, k3dRegistryCreateArgs } from '../../src/cluster/providers/k3d';
import { kindCreateArgs, kindLoadArgs } from '../../src/cluster/providers/kind';
import { FIXTURE_BIN, SYSTEM_PATH } from './cluster-fixture';

let state: string;
beforeAll(() => {
  state = mkdtempSync(join(tmpdir(), 'sriovctl-standin-cli-'));
});
afterAll(() => rmSync(state, { recursive: true, force: true }));

function run(tool: string, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(FIXTURE_BIN, tool), args, { encoding: 'utf8', env: { PATH: SYSTEM_PATH, STANDIN_DIR: state } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('stand-ins refuse what their real tool refuses', () => {
  const refusals: [string, string[], number, string][] = [
    // k3d: cobra's error, then logrus's fatal line
    ['k3d', ['cluster', 'create', 'x', '--agent', '2'], 1, 'Error: unknown flag: --agent\nFATA[0000] unknown flag: --agent\n'],
    ['k3d', ['cluster', 'create', 'x', '-z'], 1, "Error: unknown shorthand flag: 'z' in -z\nFATA[0000] unknown shorthand flag: 'z' in -z\n"],
    ['k3d', ['cluster', 'create', 'x', '--servers'], 1, 'Error: flag needs an argument: --servers\nFATA[0000] flag needs an argument: --servers\n'],
    ['k3d', ['cluster', 'create', 'x', 'y'], 1, 'Error: accepts at most 1 arg(s), received 2\nFATA[0000] accepts at most 1 arg(s), received 2\n'],
    ['k3d', ['image', 'import', '--cluster', 'x'], 1, 'Error: requires at least 1 arg(s), only received 0\nFATA[0000] requires at least 1 arg(s), only received 0\n'],
    ['k3d', ['registry', 'create', 'r', '--port=5000', '--proxy'], 1, 'Error: unknown flag: --proxy\nFATA[0000] unknown flag: --proxy\n'],
    ['k3d', ['clusters', 'list'], 1, 'Error: unknown command "clusters" for "k3d"\nFATA[0000] unknown command "clusters" for "k3d"\n'],
    ['k3d', ['cluster', 'create', 'x', '--image', 'Rancher/K3s:v1'], 1, "FATA[0000] Failed to create cluster 'x': invalid reference format: Rancher/K3s:v1\n"],
    // kind: "ERROR: " and cobra's error
    ['kind', ['create', 'cluster', '--name', 'x', '--workers', '2'], 1, 'ERROR: unknown flag: --workers\n'],
    ['kind', ['create', 'cluster', 'x'], 1, 'ERROR: unknown command "x" for "kind create cluster"\n'],
    ['kind', ['load', 'image-archive', '--name', 'x'], 1, 'ERROR: name of image archive is required\n'],
    ['kind', ['load', 'image-archive', 'a.tar', '--cluster', 'x'], 1, 'ERROR: unknown flag: --cluster\n'],
    ['kind', ['get', 'nodes', '-o', 'json'], 1, "ERROR: unknown shorthand flag: 'o' in -o\n"],
    ['kind', ['up'], 1, 'ERROR: unknown command "up" for "kind"\n'],
    // kubectl: "error: " and a usage hint
    ['kubectl', ['--context', 'k3d-x', 'get', 'pods', '--label', 'app=x'], 1, "error: unknown flag: --label\nSee 'kubectl get --help' for usage.\n"],
    ['kubectl', ['apply', '--filename=x.yaml', '--prune-whitelist=x'], 1, "error: unknown flag: --prune-whitelist\nSee 'kubectl apply --help' for usage.\n"],
    ['kubectl', ['wait', '--for', 'condition=ready', '--timeout'], 1, "error: flag needs an argument: --timeout\nSee 'kubectl wait --help' for usage.\n"],
    ['kubectl', ['lable', 'node', 'n', 'a=b'], 1, 'error: unknown command "lable" for "kubectl"\nRun \'kubectl --help\' for usage.\n'],
    // docker 20.10 / podman 4.3: exit 125 for a bad flag
    ['docker', ['inspect', '--type', 'container', '--pid', 'c'], 125, "unknown flag: --pid\nSee 'docker inspect --help'.\n"],
    ['podman', ['inspect', '--type', 'container', '--pid', 'c'], 125, "Error: unknown flag: --pid\nSee 'podman inspect --help'\n"],
    ['docker', ['inspect'], 125, "\"docker inspect\" requires at least 1 argument.\nSee 'docker inspect --help'.\n"],
    ['docker', ['inpsect', 'c'], 1, "docker: 'inpsect' is not a docker command.\nSee 'docker --help'\n"],
  ];
  for (const [tool, args, code, stderr] of refusals) {
    it(`${tool} ${args.join(' ')} → exit ${code}`, () => {
      expect(run(tool, ...args)).toEqual({ code, stdout: '', stderr });
    });
  }

  it('kubectl apply refuses a manifest with a malformed image reference', () => {
    const file = join(state, 'bad-image.yaml');
    writeFileSync(file, 'kind: Pod\nspec:\n  containers:\n    - name: x\n      image: ghcr.io/Owner/Img:v1\n');
    const r = run('kubectl', '--context', 'k3d-x', 'apply', '-f', file);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`Error from server (Invalid): error when creating "${file}": image: Invalid value: "ghcr.io/Owner/Img:v1": invalid reference format\n`);
  });

  it('kind refuses a cluster config whose node image is malformed', () => {
    const file = join(state, 'kind.yaml');
    writeFileSync(file, 'kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n    image: kindest/node:v1.33.1@sha256:bad\n');
    const r = run('kind', 'create', 'cluster', '--name', 'x', '--config', file);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'ERROR: failed to create cluster: invalid node image reference "kindest/node:v1.33.1@sha256:bad"\n' });
  });

  it('each reports the version it pins', () => {
    expect(run('k3d', 'version').stdout).toMatch(/^k3d version v5\.8\.3\n/);
    expect(run('kind', 'version').stdout).toMatch(/^kind v0\.29\.0 /);
    expect(run('kubectl', 'version', '--client').stdout).toMatch(/^Client Version: v1\.33\.1\n/);
    expect(run('docker', 'version').stdout).toMatch(/^Docker version 20\.10\./);
    expect(run('podman', 'version').stdout).toMatch(/^Version: +4\.3\./);
  });
});

describe('the command lines the providers build are accepted as they are', () => {
  it('k3d registry create, cluster create (every option up uses), image import; kind create and load', () => {
    const spec = { name: 'x', agents: 2, manifestsDir: state, stateDir: state, driver: 'vfio-pci', reservedCpus: '0', image: null };
    const archive = join(state, 'a.tar');
    writeFileSync(join(state, 'index.json'), '{}');
    spawnSync('tar', ['-cf', archive, '-C', state, 'index.json']);
    expect(run('k3d', ...k3dRegistryCreateArgs('x', 5000)).code).toBe(0);
    // flags are checked before anything runs: a dry check on a cluster of no nodes (agents 0) is enough here
    const create = run('k3d', ...k3dClusterCreateArgs({ ...spec, agents: 0 }, { registryPort: 5000 }));
    expect(create.stderr).toBe('');
    expect(create.code).toBe(0);
    expect(run('k3d', ...k3dImageImportArgs(archive, 'x'))).toMatchObject({ code: 0, stderr: '' });
    expect(run('k3d', 'cluster', 'delete', 'x')).toMatchObject({ code: 0, stderr: '' });
    writeFileSync(join(state, 'kind-config.yaml'), 'kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n');
    expect(run('kind', ...kindCreateArgs({ ...spec, agents: 0 }))).toMatchObject({ code: 0, stderr: '' });
    expect(run('kind', ...kindLoadArgs(archive, 'x'))).toMatchObject({ code: 0, stderr: '' });
    expect(run('kind', 'delete', 'cluster', '--name', 'x')).toMatchObject({ code: 0, stderr: '' });
  });
});
