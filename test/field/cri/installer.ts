// Installing sriovctl-cni into a containerd's CNI bin dir the way a cluster does: the installer image (the OCI
// archive `npm run package` writes) imported into containerd and its entry point run as a container (`ctr run`)
// with the bin dir bind-mounted where the entry point's `--to` points, as the DaemonSet mounts the node's
// /opt/cni/bin. Nothing here knows what the entry point is: it is read from the image's own config.
import { execFileSync } from 'node:child_process';
import { CRI_NAMESPACE, type Containerd } from '../containerd';

interface OciDescriptor {
  mediaType: string;
  digest: string;
  platform?: { os: string; architecture: string };
}

const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);

/** One file of an OCI archive (a tar), parsed as JSON. */
function archiveJson(archive: string, member: string): any {
  return JSON.parse(execFileSync('tar', ['-xOf', archive, member], { encoding: 'utf8', maxBuffer: 16 << 20 }));
}

function blobJson(archive: string, digest: string): any {
  const [alg, hex] = digest.split(':');
  return archiveJson(archive, `blobs/${alg}/${hex}`);
}

/** The entry point argv (Entrypoint + Cmd) of the archive's linux/amd64 image. */
export function entryPoint(archive: string): string[] {
  const index = archiveJson(archive, 'index.json');
  let manifest: OciDescriptor = index.manifests[0];
  while (INDEX_TYPES.has(manifest.mediaType)) {
    const list: OciDescriptor[] = blobJson(archive, manifest.digest).manifests;
    const amd64 = list.find((m) => m.platform?.os === 'linux' && m.platform.architecture === 'amd64');
    if (!amd64) throw new Error(`${archive}: no linux/amd64 image in its index`);
    manifest = amd64;
  }
  const config = blobJson(archive, blobJson(archive, manifest.digest).config.digest).config ?? {};
  return [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])];
}

/** Where the entry point installs to: the value of its `--to`. */
export function installTarget(argv: string[]): string {
  const i = argv.indexOf('--to');
  const to = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--to='))?.slice('--to='.length);
  if (!to) throw new Error(`the installer's entry point has no --to <dir>: ${JSON.stringify(argv)}`);
  return to;
}

/**
 * Import the installer image into `containerd` and run its entry point once, unchanged, with containerd's CNI bin
 * dir mounted at the entry point's target. Returns what the entry point printed.
 */
export function installPluginFromImage(containerd: Containerd, archive: string, containerId: string): string {
  const argv = entryPoint(archive);
  // the name containerd gave the image, as it reports it ("unpacking <name> (sha256:…)...done")
  const imported = containerd.ctr('images', 'import', '--all-platforms', archive);
  const ref = /^unpacking (\S+) \(/m.exec(imported)?.[1];
  if (!ref) throw new Error(`ctr imported no named image from ${archive}: ${imported}`);
  return containerd.run(CRI_NAMESPACE, ref, containerId, '--mount', `type=bind,src=${containerd.binDir},dst=${installTarget(argv)},options=rbind:rw`);
}
