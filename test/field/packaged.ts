// Where `npm run package` puts its output, for the field tier's tests.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { INSTALLER_ARCHIVE_NAME } from '../../src/install/installer-image';

export const REPO = resolve(__dirname, '..', '..');
export const PKG_DIR = join(REPO, 'dist', 'pkg');
export const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

/** The self-contained executable of one architecture. */
export function executable(arch: 'amd64' | 'arm64'): string {
  return join(PKG_DIR, `sriovctl-linux-${arch}`);
}

/** The static native shim of one architecture (the executable of that arch carries the same bytes). */
export function shim(arch: 'amd64' | 'arm64'): string {
  return join(PKG_DIR, `sriovctl-cni-shim-linux-${arch}`);
}

/** The multi-arch installer image, one OCI archive. */
export const IMAGE_ARCHIVE = join(PKG_DIR, INSTALLER_ARCHIVE_NAME);

/** The first packaged file that is missing, or null. */
export function missingPackage(): string | null {
  const resident = [shim('amd64'), shim('arm64'), join(PKG_DIR, 'sriovctl-daemon.service')];
  for (const f of [executable('amd64'), executable('arm64'), ...resident, IMAGE_ARCHIVE, join(PKG_DIR, 'SHA256SUMS')]) {
    if (!existsSync(f)) return f;
  }
  return null;
}
