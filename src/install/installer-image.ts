// The installer image `npm run package` builds (scripts/package/image.mjs) and the cluster uses: its name, its
// tag (the package version), where its entry point expects the node's CNI bin dir, and its OCI archive, which
// the k3d and kind providers import into the nodes (airgap: nothing is pulled).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../package/root';
import { packageVersion } from '../package/version';
import { selfExecutable } from '../package/self-executable';

/** A name k3d, kind and ctr accept as is (fully qualified: kubelet's `sriovctl/sriovctl-cni:<v>` resolves to it). */
export const INSTALLER_IMAGE_REPOSITORY = 'docker.io/sriovctl/sriovctl-cni';
/** The DaemonSet mounts the node's CNI bin dir here; the image's entry point installs into it. */
export const INSTALLER_CNI_BIN = '/host/opt/cni/bin';
export const INSTALLER_ARCHIVE_NAME = 'sriovctl-cni-image.oci.tar';

export function installerImage(): string {
  return `${INSTALLER_IMAGE_REPOSITORY}:${packageVersion()}`;
}

/**
 * The image archive to import into cluster nodes, or null when there is none: `explicit` (SRIOVCTL_INSTALLER_ARCHIVE,
 * Config.installerArchive; '' none), else the one beside the self-contained executable, else the checkout's dist/pkg/.
 */
export function installerArchive(explicit: string | undefined): string | null {
  if (explicit !== undefined) return explicit === '' ? null : explicit;
  const self = selfExecutable();
  const file = self ? join(dirname(self), INSTALLER_ARCHIVE_NAME) : join(packageRoot(), 'dist', 'pkg', INSTALLER_ARCHIVE_NAME);
  return existsSync(file) ? file : null;
}
