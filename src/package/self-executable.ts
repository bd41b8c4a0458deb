// The self-contained executable this process runs from, if it is one (Node's single executable application);
// null when sriovctl runs on a Node.js installation (npm, a checkout), where process.execPath is node itself.
// Started by the plugin's launcher, the executable runs under a payload's private loader and process.execPath is
// that loader (src/package/payload-layout.ts): the executable is the payload's. Under any other explicit loader the
// executable cannot be found, and this is null too (install-cni must never copy a loader as the plugin).
import { basename } from 'node:path';
import { isLoaderName, loaderArgs, privateLoaderOf } from './payload-layout';

export function isSea(): boolean {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- node:sea exists only in Node >= 20.12
    const sea = require('node:sea') as { isSea(): boolean };
    return sea.isSea();
  } catch {
    // Node.js before 20.12 has no node:sea, and runs no single executable either
    return false;
  }
}

export function selfExecutable(): string | null {
  if (!isSea()) return null;
  const p = privateLoaderOf(process.execPath);
  if (p) return p.executable;
  return isLoaderName(basename(process.execPath)) ? null : process.execPath;
}

/** How to run this executable again with argv[0] `argv0`: a program, the arguments before the caller's; or null. */
export function selfCommand(argv0: string): { file: string; args: string[]; argv0: string } | null {
  const self = selfExecutable();
  if (!self) return null;
  const p = privateLoaderOf(process.execPath);
  return p ? { file: p.loader, args: loaderArgs(p, argv0), argv0 } : { file: self, args: [], argv0 };
}
