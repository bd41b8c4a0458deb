// The package's version: `--version` and the installer image's tag. The self-contained executable has no
// package.json beside it, so scripts/package defines SRIOVCTL_VERSION in its bundles at build time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './root';

declare const SRIOVCTL_VERSION: string | undefined;

export function packageVersion(): string {
  if (typeof SRIOVCTL_VERSION === 'string') return SRIOVCTL_VERSION;
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
