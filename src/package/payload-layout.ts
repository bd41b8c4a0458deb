// The payload install-cni writes beside the plugin so it runs on a node without glibc (k3s's busybox image):
//
//   <binDir>/sriovctl-cni            the static native shim (native/shim/), whose fallback is sriovctl.d/oneshot;
//                                    with install-cni --no-shim, the static launcher itself
//   <binDir>/sriovctl.d              a symlink, swapped atomically by install-cni, to
//   <binDir>/sriovctl.d-<hash>/      one immutable payload (<hash>: 16 hex of the SHA-256 of its content)
//       sriovctl                     the packaged executable (Node SEA, dynamically linked against glibc)
//       oneshot                      the static launcher
//       lib/ld-linux-<arch>.so.N     the private glibc's loader, and the libraries the executable needs
//       lib/libc.so.6 …
//
// The launcher runs `lib/ld-linux-… --library-path <payload>/lib --argv0 sriovctl-cni <payload>/sriovctl`: the
// executable runs under the payload's loader, so process.execPath (/proc/self/exe) is that loader, not the
// executable; privateLoaderOf() recognises it, for whoever needs the executable (install-cni copies it, the
// bounded sysfs writer runs it again under another name). native/launcher/oneshot.c spells the same names.
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export const PAYLOAD_LINK = 'sriovctl.d';
export const PAYLOAD_EXECUTABLE = 'sriovctl';
export const PAYLOAD_LAUNCHER = 'oneshot';
export const PAYLOAD_LIB_DIR = 'lib';

/** The directory name of the payload whose content hashes to `hash` (hex). */
export function payloadVersionName(hash: string): string {
  return `${PAYLOAD_LINK}-${hash.slice(0, 16)}`;
}

/** Every name install-cni may have left beside the link (versions, and a directory it moved aside). */
export function isPayloadVersionName(name: string): boolean {
  return name.startsWith(`${PAYLOAD_LINK}-`);
}

/** glibc's loader names: ld-linux-x86-64.so.2, ld-linux-aarch64.so.1. */
const LOADER_NAME = /^ld-linux-[\w-]+\.so\.\d+$/;

export function isLoaderName(name: string): boolean {
  return LOADER_NAME.test(name);
}

export interface PrivateLoader {
  loader: string;
  libDir: string;
  executable: string;
}

/** When `execPath` is a payload's loader (<payload>/lib/ld-linux-…): the loader, its lib dir and the executable. */
export function privateLoaderOf(execPath: string): PrivateLoader | null {
  const libDir = dirname(execPath);
  if (!isLoaderName(basename(execPath)) || basename(libDir) !== PAYLOAD_LIB_DIR) return null;
  const executable = join(dirname(libDir), PAYLOAD_EXECUTABLE);
  return existsSync(executable) ? { loader: execPath, libDir, executable } : null;
}

/** The arguments that make `loader` run `executable` with argv[0] `argv0` (glibc >= 2.33's ld.so). */
export function loaderArgs(p: PrivateLoader, argv0: string): string[] {
  return ['--library-path', p.libDir, '--argv0', argv0, p.executable];
}
