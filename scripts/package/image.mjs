// The installer image: multi-arch (linux/amd64 + linux/arm64), built offline with Debian's buildah FROM scratch —
// the executable itself, whose entry point installs the plugin (`sriovctl install-cni`), so the image needs no
// shell; and the C runtime it links (Node's official binaries are dynamic: glibc's loader, libc, libstdc++ …),
// taken from this machine (amd64) and from the cross toolchain's target libraries (arm64) — and written as one OCI archive that `ctr images import --all-platforms`,
// `k3d image import` and `kind load image-archive` accept. buildah runs with a private, throw-away storage (vfs)
// so it never touches the machine's own image store.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runtimeDir } from './runtimes.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
// the name, tag, mount point and file name the cluster code uses (npm run build made dist/ before us)
const { INSTALLER_ARCHIVE_NAME, INSTALLER_CNI_BIN, installerImage } = createRequire(import.meta.url)(join(ROOT, 'dist', 'install', 'installer-image.js'));

/** Where each architecture's glibc comes from here, and where its loader looks for it in the image. */
const C_RUNTIME = {
  amd64: { from: '/lib/x86_64-linux-gnu', to: '/lib/x86_64-linux-gnu' },
  arm64: { from: '/usr/aarch64-linux-gnu/lib', to: '/lib/aarch64-linux-gnu' },
};

/** [source, path in the image] for the ELF interpreter and every library the runtime needs (readelf). */
function cRuntimeFiles(arch) {
  const node = join(runtimeDir(arch), 'bin', 'node');
  const headers = execFileSync('readelf', ['-d', '-l', node], { encoding: 'utf8' });
  const interp = /Requesting program interpreter: (\S+)\]/.exec(headers)[1];
  const needed = [...headers.matchAll(/\(NEEDED\)\s+Shared library: \[(\S+)\]/g)].map((m) => m[1]);
  const { from, to } = C_RUNTIME[arch];
  const loaderName = interp.split('/').pop();
  const files = [[join(from, loaderName), interp]];
  for (const lib of needed) if (lib !== loaderName) files.push([join(from, lib), join(to, lib)]);
  return files;
}

/** Builds the image from `executables` ({ arch: path }) and returns the archive's path in dist/pkg. */
export function buildImage(executables, version, work) {
  if (!installerImage().endsWith(`:${version}`)) throw new Error(`image tag ${installerImage()} is not the package version ${version}`);
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
      for (const [src, dst] of cRuntimeFiles(arch)) buildah('copy', '--chmod', '0755', ctr, src, dst);
      buildah('config', '--arch', arch, '--os', 'linux', '--entrypoint', JSON.stringify(['/sriovctl', 'install-cni', '--to', INSTALLER_CNI_BIN]), '--cmd', '', '--label', `org.opencontainers.image.version=${version}`, ctr);
      const image = `localhost/sriovctl-cni-${arch}:${version}`;
      buildah('commit', '--format', 'oci', '--rm', ctr, image);
      buildah('manifest', 'add', '--arch', arch, '--os', 'linux', list, `containers-storage:${image}`);
    }
    const out = join(ROOT, 'dist', 'pkg', INSTALLER_ARCHIVE_NAME);
    const tmp = `${out}.tmp-${process.pid}`;
    rmSync(tmp, { force: true });
    buildah('manifest', 'push', '--all', '--format', 'oci', list, `oci-archive:${tmp}:${installerImage()}`);
    renameSync(tmp, out);
    return out;
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
}
