// The installer image: multi-arch (linux/amd64 + linux/arm64), built offline with Debian's buildah FROM scratch —
// one file per architecture, the executable itself, whose entry point installs the plugin (`sriovctl install-cni`),
// so the image needs no shell — and written as one OCI archive that `ctr images import --all-platforms`,
// `k3d image import` and `kind load image-archive` accept. buildah runs with a private, throw-away storage (vfs)
// so it never touches the machine's own image store.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The image's name without its tag; the tag is the package version (src/cluster/manifests.ts agrees). */
export const IMAGE_REPOSITORY = 'docker.io/sriovctl/sriovctl-cni';
/** Where the DaemonSet mounts the node's CNI bin dir (src/cluster/manifests.ts). */
export const HOST_CNI_BIN = '/host/opt/cni/bin';
export const ARCHIVE_NAME = 'sriovctl-cni-image.oci.tar';

/** Builds the image from `executables` ({ arch: path }) and returns the archive's path in dist/pkg. */
export function buildImage(executables, version, work) {
  const storage = join(work, 'storage');
  mkdirSync(storage, { recursive: true });
  const buildah = (...args) =>
    execFileSync('buildah', ['--root', join(storage, 'root'), '--runroot', join(storage, 'run'), '--storage-driver', 'vfs', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  const list = `localhost/sriovctl-cni-list:${version}`;
  try {
    buildah('manifest', 'create', list);
    for (const [arch, exe] of Object.entries(executables)) {
      const ctr = buildah('from', '--arch', arch, '--os', 'linux', '--name', `sriovctl-cni-${arch}-${process.pid}`, 'scratch');
      buildah('copy', '--chmod', '0755', ctr, exe, '/sriovctl');
      buildah('config', '--arch', arch, '--os', 'linux', '--entrypoint', JSON.stringify(['/sriovctl', 'install-cni', '--to', HOST_CNI_BIN]), '--cmd', '', '--label', `org.opencontainers.image.version=${version}`, ctr);
      const image = `localhost/sriovctl-cni-${arch}:${version}`;
      buildah('commit', '--format', 'oci', '--rm', ctr, image);
      buildah('manifest', 'add', '--arch', arch, '--os', 'linux', list, `containers-storage:${image}`);
    }
    const out = join(ROOT, 'dist', 'pkg', ARCHIVE_NAME);
    const tmp = `${out}.tmp-${process.pid}`;
    rmSync(tmp, { force: true });
    buildah('manifest', 'push', '--all', '--format', 'oci', list, `oci-archive:${tmp}:${IMAGE_REPOSITORY}:${version}`);
    renameSync(tmp, out);
    return out;
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
}
