// Airgap `cluster up --provider k3d` against the stand-ins: an online run pulls each image once and saves it into
// the state dir's image cache, a later --airgap run imports from there (no pull, no registry), --images supplies
// archives, and a missing archive is named in preflight before anything changes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { archiveFileName, imagesOf } from '../../src/cluster/kubernetes/images';
import { renderManifests } from '../../src/cluster/kubernetes/manifests';
import { k3sAirgapImagesNames } from '../../src/cluster/providers/k3d';
import { DEFAULT_K3S_IMAGE } from '../../src/cluster/kubernetes/version';
import { installerImage } from '../../src/install/installer-image';
import { loadConfig } from '../../src/config';
import { findRecords } from '../helpers/engine';
import { nicState } from '../helpers/lend-fixture';
import { calicoFixture, restoreEnv, sriovctl, useProviderWorld, type Standins, type StandInPf } from './cluster-fixture';

let standins: Standins;
let name: string;
let work: string;
let pfs: StandInPf[];

const PFS = [{ suffix: 'pf0', bdf: '0000:3c:00.0' }];
useProviderWorld('k3d', PFS, { macPrefix: '02:5e:00:00', totalVfs: 4, env: { STANDIN_ALLOCATABLE: '2' } }, (w) => ({ standins, name, work, pfs } = w));

function upArgs(...extra: string[]): string[] {
  return ['cluster', 'up', '--provider', 'k3d', '--name', name, '--agents', '1', '--vfs', '2', '--manifests', join(work, 'm'), '--vf-timeout', '10', ...extra];
}

/** The images the rendered manifests run (with k3s's flannel dirs: no --primary-cni), the installer's excepted. */
function componentImages(): string[] {
  const cni = { binDir: '/var/lib/rancher/k3s/data/cni', confDir: '/var/lib/rancher/k3s/agent/etc/cni/net.d' };
  return imagesOf(renderManifests({ pfNames: ['x'], driver: null, cni }).flatMap((f) => f.objects)).filter((r) => r !== installerImage());
}

const cacheDir = () => join(loadConfig(process.env).stateDir, 'images');

/** A docker-archive as `docker save` writes it (manifest.json naming the ref) in `dir`, named after the ref. */
function archiveIn(dir: string, ref: string): string {
  const tmp = mkdtempSync(join(work, 'archive-'));
  writeFileSync(join(tmp, 'manifest.json'), JSON.stringify([{ Config: 'c.json', RepoTags: [ref], Layers: [] }]));
  const file = join(dir, archiveFileName(ref));
  execFileSync('tar', ['-cf', file, '-C', tmp, 'manifest.json']);
  return file;
}

/** k3s's release tarball of its own images, as the user puts it beside the archives (its content is k3s's business). */
function k3sTarball(dir: string): string {
  const file = join(dir, k3sAirgapImagesNames()[2]);
  writeFileSync(file, '');
  return file;
}

/** The --volume that hands k3s its own images on every node. */
function k3sVolume(file: string): string {
  return `${file}:/var/lib/rancher/k3s/agent/images/${k3sAirgapImagesNames()[2]}@server:*;agent:*`;
}

function imports(from = 0): string[] {
  return standins.calls('k3d').slice(from).filter((c) => c.args[0] === 'image' && c.args[1] === 'import').map((c) => c.args[2]);
}

describe('airgap images (k3d)', () => {
  it('an online run saves every image into the cache; a later --airgap run imports from it and pulls nothing', async () => {
    const images = componentImages();
    expect(images.some((r) => r.includes('multus-cni'))).toBe(true);
    expect(images.some((r) => r.includes('sriov-network-device-plugin'))).toBe(true);

    const online = await sriovctl(...upArgs('-q'));
    expect(online.stderr).toBe('');
    expect(online.code).toBe(0);
    const docker = standins.calls('docker').map((c) => c.args);
    for (const ref of images) {
      expect(docker).toContainEqual(['pull', ref]);
      const save = docker.find((a) => a[0] === 'save' && a.at(-1) === ref)!;
      expect(save.slice(0, 2)).toEqual(['save', '-o']);
      expect(existsSync(join(cacheDir(), archiveFileName(ref)))).toBe(true);
    }
    // the installer image is never pulled: its archive from `npm run package` is imported as it is
    expect(docker.some((a) => a.includes(installerImage()))).toBe(false);
    expect(imports().sort()).toEqual([standins.archive, ...images.map((r) => join(cacheDir(), archiveFileName(r)))].sort());
    // each import comes after the cluster exists and before anything is applied
    const calls = standins.calls();
    const created = calls.findIndex((c) => c.tool === 'k3d' && c.args[0] === 'cluster' && c.args[1] === 'create');
    const firstApply = calls.findIndex((c) => c.tool === 'kubectl' && c.args[3] === 'apply');
    for (const [i, c] of calls.entries()) if (c.tool === 'k3d' && c.args[1] === 'import') expect(i > created && i < firstApply).toBe(true);
    expect((await sriovctl('cluster', 'down', '--name', name, '-q')).code).toBe(0);

    // offline now: a pull would fail, and none is made; k3s's own images are put beside the cache by hand
    const tarball = k3sTarball(cacheDir());
    const before = standins.calls().length;
    process.env.STANDIN_OFFLINE = '1';
    try {
      const airgap = await sriovctl(...upArgs('--airgap', '-q'));
      expect(airgap.stderr).toBe('');
      expect(airgap.code).toBe(0);
    } finally {
      restoreEnv('STANDIN_OFFLINE', undefined);
    }
    const after = standins.calls().slice(before);
    expect(after.filter((c) => c.args[0] === 'pull' || c.args[0] === 'save')).toEqual([]);
    expect(imports(standins.calls('k3d').length - after.filter((c) => c.tool === 'k3d').length).sort()).toEqual(
      [standins.archive, ...images.map((r) => join(cacheDir(), archiveFileName(r)))].sort(),
    );
    // no registry with --airgap: k3d would pull its image
    expect(after.filter((c) => c.tool === 'k3d' && c.args[0] === 'registry' && c.args[1] === 'create')).toEqual([]);
    const create = after.find((c) => c.tool === 'k3d' && c.args[1] === 'create')!;
    expect(create.args).not.toContain('--registry-use');
    expect(create.args).toContain(k3sVolume(tarball));
    expect((await sriovctl('cluster', 'down', '--name', name, '-q')).code).toBe(0);
    for (const pf of pfs) expect(nicState(pf.name)).toEqual(pf.before);
  });

  it('--airgap with archives missing: preflight names each image and the files it looked for, nothing changes', async () => {
    const dir = join(work, 'images');
    mkdirSync(dir);
    const images = componentImages();
    const [given, ...absent] = images;
    archiveIn(dir, given);
    const node = 'docker.io/rancher/k3s:v1.31.5-k3s1';
    const up = await sriovctl(...upArgs('--airgap', '--images', dir, '--image', node));
    expect(up.code).toBe(1);
    expect(up.stderr).toContain('preflight failed, nothing was changed:');
    for (const ref of absent) {
      const file = archiveFileName(ref);
      expect(up.stderr).toContain(`  - image ${ref}: no archive (--airgap pulls nothing; looked for ${join(dir, file)}, ${join(cacheDir(), file)})`);
    }
    expect(up.stderr).not.toContain(`image ${given}:`);
    expect(up.stderr).toContain(`  - node image ${node} is not in docker's image store (--airgap pulls nothing: \`docker load -i <archive>\` it first)`);
    const names = k3sAirgapImagesNames();
    expect(up.stderr).toContain(`  - k3s's own images (pause, coredns, …): no ${names.join(' or ')} in ${dir}, ${cacheDir()} (--airgap pulls nothing`);
    // nothing was pulled, created or lent
    expect(standins.calls('docker').filter((c) => c.args[0] !== 'image')).toEqual([]);
    expect(standins.calls('k3d').filter((c) => c.args[1] === 'create' || c.args[1] === 'import')).toEqual([]);
    expect(nicState(pfs[0].name)).toEqual(pfs[0].before);
    expect(findRecords()).toEqual([]);
    expect(existsSync(cacheDir())).toBe(false);
  });

  it('--airgap without --image: the provider\'s default node image must be in the store too, or preflight names it', async () => {
    const dir = join(work, 'images');
    mkdirSync(dir);
    for (const ref of componentImages()) archiveIn(dir, ref);
    k3sTarball(dir);
    const up = await sriovctl(...upArgs('--airgap', '--images', dir));
    expect(up.code).toBe(1);
    expect(up.stderr).toContain(`  - node image ${DEFAULT_K3S_IMAGE} is not in docker's image store (--airgap pulls nothing`);
    expect(standins.calls('k3d').filter((c) => c.args[1] === 'create')).toEqual([]);
    expect(findRecords()).toEqual([]);

    // once it is there (an earlier online create pulled it), the same airgap run goes through
    execFileSync('docker', ['pull', DEFAULT_K3S_IMAGE], { env: process.env });
    process.env.STANDIN_OFFLINE = '1';
    try {
      const again = await sriovctl(...upArgs('--airgap', '--images', dir, '-q'));
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
    } finally {
      restoreEnv('STANDIN_OFFLINE', undefined);
    }
    expect((await sriovctl('cluster', 'down', '--name', name, '-q')).code).toBe(0);
  });

  it('--images supplies every archive, the primary CNI\'s images too; the node image is taken from the runtime', async () => {
    const dir = join(work, 'images');
    mkdirSync(dir);
    const calico = 'docker.io/calico/node:v3.28.2';
    const archives = [...componentImages(), calico].map((ref) => archiveIn(dir, ref));
    const tarball = k3sTarball(dir);
    const node = 'docker.io/rancher/k3s:v1.31.5-k3s1';
    execFileSync('docker', ['pull', node], { env: process.env }); // in the stand-in's store, as `docker load` would put it
    process.env.STANDIN_OFFLINE = '1';
    try {
      const up = await sriovctl(...upArgs('--airgap', '--images', dir, '--image', node, '--primary-cni', calicoFixture(work), '-q'));
      expect(up.stderr).toBe('');
      expect(up.code).toBe(0);
    } finally {
      restoreEnv('STANDIN_OFFLINE', undefined);
    }
    expect(imports().sort()).toEqual([standins.archive, ...archives].sort());
    expect(existsSync(cacheDir())).toBe(false);
    const create = standins.calls('k3d').find((c) => c.args[1] === 'create')!.args;
    expect(create).toContain('--flannel-backend=none@server:*');
    expect(create).toContain(k3sVolume(tarball));
    expect(create[create.indexOf('--image') + 1]).toBe(node);
    expect((await sriovctl('cluster', 'down', '--name', name, '-q')).code).toBe(0);
  });

  it('--airgap refuses a primary CNI URL, and the installer archive must exist even online', async () => {
    process.env.SRIOVCTL_INSTALLER_ARCHIVE = '';
    const up = await sriovctl(...upArgs('--airgap', '--primary-cni', 'https://manifests.invalid/calico.yaml'));
    expect(up.code).toBe(1);
    expect(up.stderr).toContain('  - primary CNI manifest: https://manifests.invalid/calico.yaml is a URL and --airgap never uses the network: give a file');
    const online = await sriovctl(...upArgs());
    expect(online.code).toBe(1);
    const file = archiveFileName(installerImage());
    expect(online.stderr).toContain(`  - image ${installerImage()}: no archive (it is never pulled: \`npm run package\` makes it; looked for the archive of \`npm run package\``);
    expect(online.stderr).toContain(join(cacheDir(), file));
    expect(standins.calls('docker').filter((c) => c.args[0] === 'pull')).toEqual([]);
    expect(standins.calls('k3d').filter((c) => c.args[1] === 'create')).toEqual([]);
    expect(nicState(pfs[0].name)).toEqual(pfs[0].before);
  });
});
