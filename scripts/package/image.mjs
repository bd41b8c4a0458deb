// The installer image: multi-arch (linux/amd64 + linux/arm64), built offline with Debian's buildah FROM scratch —
// the executable itself, whose entry point installs the plugin (`sriovctl install-cni`), so the image needs no
// shell; and the C runtime it links (./c-runtime.mjs: glibc's loader, libc, libstdc++ …) where its loader looks —
// and written as one OCI archive that `ctr images import --all-platforms`,
// `k3d image import` and `kind load image-archive` accept. buildah runs with a private, throw-away storage (vfs)
// so it never touches the machine's own image store.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cacheDir } from './cache.mjs';
import { cRuntimeFiles } from './c-runtime.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
// the name, tag, mount point and file name the cluster code uses (npm run build made dist/ before us)
const { INSTALLER_ARCHIVE_NAME, INSTALLER_CNI_BIN, installerImage } = createRequire(import.meta.url)(join(ROOT, 'dist', 'install', 'installer-image.js'));

/**
 * Builds the image from `executables` ({ arch: path }) and returns the archive's path in dist/pkg. The same
 * executables, C runtime and recipe make the same image: the last archive is reused (building one takes ~15 s).
 */
export function buildImage(executables, version, work) {
  if (!installerImage().endsWith(`:${version}`)) throw new Error(`image tag ${installerImage()} is not the package version ${version}`);
  const out = join(ROOT, 'dist', 'pkg', INSTALLER_ARCHIVE_NAME);
  const key = createHash('sha256').update(`${installerImage()}\0`).update(readFileSync(new URL(import.meta.url)));
  for (const [arch, exe] of Object.entries(executables)) {
    key.update(`${arch}\0`).update(readFileSync(exe));
    for (const { source, systemPath } of cRuntimeFiles(arch)) key.update(`${systemPath}\0`).update(readFileSync(source));
  }
  const cached = join(cacheDir(), `sriovctl-cni-image-${key.digest('hex').slice(0, 24)}.oci.tar`);
  if (!existsSync(cached)) {
    build(executables, version, work, `${cached}.tmp-${process.pid}`);
    // one cached archive: older ones are dead weight (~80 MB each)
    for (const f of readdirSync(cacheDir())) if (f.startsWith('sriovctl-cni-image-') && f.endsWith('.oci.tar')) rmSync(join(cacheDir(), f));
    renameSync(`${cached}.tmp-${process.pid}`, cached);
  }
  copyFileSync(cached, out);
  return out;
}

function build(executables, version, work, out) {
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
      // buildah copy follows a symlinked source: each file lands whole under its soname
      for (const { source, systemPath } of cRuntimeFiles(arch)) buildah('copy', '--chmod', '0755', ctr, source, systemPath);
      buildah('config', '--arch', arch, '--os', 'linux', '--entrypoint', JSON.stringify(['/sriovctl', 'install-cni', '--to', INSTALLER_CNI_BIN]), '--cmd', '', '--label', `org.opencontainers.image.version=${version}`, ctr);
      const image = `localhost/sriovctl-cni-${arch}:${version}`;
      buildah('commit', '--format', 'oci', '--rm', ctr, image);
      buildah('manifest', 'add', '--arch', arch, '--os', 'linux', list, `containers-storage:${image}`);
    }
    rmSync(out, { force: true });
    buildah('manifest', 'push', '--all', '--format', 'oci', list, `oci-archive:${out}:${installerImage()}`);
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
}
