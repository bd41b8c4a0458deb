import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { archiveFileName, imagesOf, planImages, saveArgs } from '../../src/cluster/kubernetes/images';

describe('image archives', () => {
  it('are named after the reference', () => {
    expect(archiveFileName('ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.4')).toBe('ghcr.io_k8snetworkplumbingwg_multus-cni_v4.1.4.tar');
    expect(archiveFileName('registry.k8s.io/pause@sha256:ee')).toBe('registry.k8s.io_pause_sha256_ee.tar');
    expect(archiveFileName('localhost:5000/x:1')).toBe('localhost_5000_x_1.tar');
  });

  it("are found for every container's image, init and nested ones too, once each", () => {
    const ds = (containers: unknown[], initContainers: unknown[] = []) => ({
      kind: 'DaemonSet',
      spec: { template: { spec: { initContainers, containers } } },
    });
    const objects = [
      ds([{ name: 'a', image: 'a:1' }], [{ name: 'i', image: 'init:1' }]),
      { kind: 'ConfigMap', data: { image: 'not-a-container:1' } },
      ds([{ name: 'b', image: 'b:1' }, { name: 'a2', image: 'a:1' }]),
      { kind: 'Pod', spec: { containers: [{ name: 'p', image: 'p:1' }, { name: 'no-image' }] } },
    ];
    expect(imagesOf(objects)).toEqual(['init:1', 'a:1', 'b:1', 'p:1']);
  });

  it('are taken from the installer archive, then --images, then the cache; the missing ones say where they were looked for', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sriovctl-images-'));
    try {
      const images = join(dir, 'images');
      const cache = join(dir, 'cache');
      for (const d of [images, cache]) mkdirSync(d);
      const installer = join(dir, 'installer.oci.tar');
      writeFileSync(installer, '');
      writeFileSync(join(images, archiveFileName('a:1')), '');
      writeFileSync(join(cache, archiveFileName('a:1')), '');
      writeFileSync(join(cache, archiveFileName('b:1')), '');
      const plan = planImages(['a:1', 'inst:1', 'b:1', 'c:1', 'a:1'], { imagesDir: images, cacheDir: cache, installer: { ref: 'inst:1', archive: installer } });
      expect(plan.found).toEqual([
        { ref: 'a:1', archive: join(images, 'a_1.tar') },
        { ref: 'inst:1', archive: installer },
        { ref: 'b:1', archive: join(cache, 'b_1.tar') },
      ]);
      expect(plan.missing).toEqual([{ ref: 'c:1', looked: [join(images, 'c_1.tar'), join(cache, 'c_1.tar')] }]);
      const noInstaller = planImages(['inst:1'], { imagesDir: null, cacheDir: cache, installer: { ref: 'inst:1', archive: join(dir, 'gone.tar') } });
      expect(noInstaller.missing).toEqual([{ ref: 'inst:1', looked: [join(dir, 'gone.tar'), join(cache, 'inst_1.tar')] }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are saved as docker-archives by either runtime', () => {
    expect(saveArgs('docker', 'a:1', '/c/a.tar')).toEqual(['save', '-o', '/c/a.tar', 'a:1']);
    expect(saveArgs('podman', 'a:1', '/c/a.tar')).toEqual(['save', '--format', 'docker-archive', '-o', '/c/a.tar', 'a:1']);
  });
});
