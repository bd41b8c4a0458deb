// The installer image archive (dist/pkg), as a node's runtime takes it: containerd's ctr imports it with every
// platform (what kind load image-archive and k3d image import do), and its entry point — the executable itself,
// no shell — installs the plugin into a bind-mounted CNI bin dir.
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type Containerd } from './containerd';
import { installerImage } from '../../src/install/installer-image';
import { expectInstalledPlugin } from './installed-plugin';
import { executable, IMAGE_ARCHIVE, PACKAGE_VERSION } from './packaged';

const REF = installerImage();
const NS = 'sriovctl-field';

describe('the installer image archive', () => {
  let c: Containerd;
  beforeAll(async () => {
    c = await startContainerd();
  });
  afterAll(async () => {
    await c?.teardown();
  });

  it('imports with ctr --all-platforms as one multi-arch image tagged with the package version', () => {
    expect(REF).toBe(`docker.io/sriovctl/sriovctl-cni:${PACKAGE_VERSION}`);
    c.ctrIn(NS, 'images', 'import', '--all-platforms', IMAGE_ARCHIVE);
    const list = c.ctrIn(NS, 'images', 'ls');
    const row = list.split('\n').find((l) => l.startsWith(`${REF} `));
    expect(row, list).toBeDefined();
    expect(row).toMatch(/application\/vnd\.oci\.image\.index\.v1\+json/);
    expect(row).toMatch(/linux\/amd64,linux\/arm64/);
    expect(c.ctrIn(NS, 'images', 'check')).toMatch(new RegExp(`${REF.replace(/[.]/g, '\\.')} .*complete \\(2/2\\)`));
  });

  it('holds only the executable, and its entry point installs the plugin into the mounted CNI bin dir', () => {
    const bin = join(c.dir, 'host-cni-bin');
    mkdirSync(bin);
    chmodSync(bin, 0o755);
    // the executable and the C runtime it links: no shell, nothing else
    const rootfs = join(c.dir, 'rootfs');
    mkdirSync(rootfs);
    c.ctrIn(NS, 'images', 'mount', '--platform', 'linux/amd64', REF, rootfs);
    try {
      const files = walk(rootfs);
      expect(files.filter((f) => !/^\/lib(64)?\/(x86_64-linux-gnu\/)?(ld-linux|lib)[\w+-]*\.so[.\d]*$/.test(f))).toEqual(['/sriovctl']);
      expect(files).toContain('/lib64/ld-linux-x86-64.so.2');
      expect(files).toContain('/lib/x86_64-linux-gnu/libc.so.6');
      expect(statSync(join(rootfs, 'sriovctl')).mode & 0o777).toBe(0o755);
      expect(readFileSync(join(rootfs, 'sriovctl')).equals(readFileSync(executable('amd64')))).toBe(true);
    } finally {
      c.ctrIn(NS, 'images', 'unmount', rootfs);
    }

    const id = `sriovctl-install-${process.pid}`;
    const out = c.run(NS, REF, id, '--net-host', '--mount', `type=bind,src=${bin},dst=/host/opt/cni/bin,options=rbind:rw`);
    expect(out).toBe('installed /host/opt/cni/bin/sriovctl-cni\n');
    expectInstalledPlugin(bin, 'amd64');
    // a DaemonSet restart: nothing to do
    expect(c.run(NS, REF, id, '--net-host', '--mount', `type=bind,src=${bin},dst=/host/opt/cni/bin,options=rbind:rw`)).toBe(
      '/host/opt/cni/bin/sriovctl-cni is up to date\n',
    );
  });
});

/** Every file under `root`, as absolute paths inside it. */
function walk(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(root, `${dir}/${e.name}`) : [`${dir}/${e.name}`],
  );
}
