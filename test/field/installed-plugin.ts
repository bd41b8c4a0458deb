// What `install-cni` must leave in a CNI bin dir (src/package/payload-layout.ts): <binDir>/sriovctl-cni (the static native
// shim of the arch, or with --no-shim the static launcher), the sriovctl.d link to one payload sriovctl.d-<hash>/
// holding the executable, the launcher and the private glibc — the loader and exactly the libraries the
// executable's DT_NEEDED names, read here with readelf.
import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect } from 'vitest';
import { INSTALL_LOCK_FILE } from '../../src/install/install-lock';
import { executable, shim } from './packaged';
import type { Arch } from './run-packaged';

/** The payload's lib/ as the executable of `arch` needs it: its interpreter's file name and its DT_NEEDED. */
export function expectedLibs(arch: Arch): string[] {
  const headers = execFileSync('readelf', ['-d', '-l', executable(arch)], { encoding: 'utf8' });
  const interp = basename(/Requesting program interpreter: (\S+)\]/.exec(headers)![1]);
  const needed = [...headers.matchAll(/\(NEEDED\)\s+Shared library: \[(\S+)\]/g)].map((m) => m[1]);
  return [...new Set([interp, ...needed])].sort();
}

/**
 * Asserts `binDir` holds exactly the plugin of `arch` as install-cni writes it, `sriovctl-cni` being the shim
 * (or with `plugin: 'oneshot'`, --no-shim, the launcher); returns the payload dir's name.
 */
export function expectInstalledPlugin(binDir: string, arch: Arch, plugin: 'shim' | 'oneshot' = 'shim'): string {
  const version = readlinkSync(join(binDir, 'sriovctl.d'));
  expect(version).toMatch(/^sriovctl\.d-[0-9a-f]{16}$/);
  // and the installers' lock file (src/install/install-lock.ts)
  expect(readdirSync(binDir).sort()).toEqual([INSTALL_LOCK_FILE, 'sriovctl-cni', 'sriovctl.d', version]);
  const payload = join(binDir, version);
  expect(readdirSync(payload).sort()).toEqual(['lib', 'oneshot', 'sriovctl']);
  expect(readdirSync(join(payload, 'lib')).sort()).toEqual(expectedLibs(arch));
  for (const f of ['sriovctl', 'oneshot', ...expectedLibs(arch).map((l) => `lib/${l}`)]) {
    const st = lstatSync(join(payload, f));
    expect([f, st.isFile(), st.mode & 0o7777]).toEqual([f, true, 0o755]);
  }
  expect(lstatSync(join(binDir, 'sriovctl-cni')).mode & 0o7777).toBe(0o755);
  expect(readFileSync(join(payload, 'sriovctl')).equals(readFileSync(executable(arch)))).toBe(true);
  const expected = plugin === 'shim' ? shim(arch) : join(payload, 'oneshot');
  expect(readFileSync(join(binDir, 'sriovctl-cni')).equals(readFileSync(expected))).toBe(true);
  // the shim and the launcher are static: they need nothing from the node, not even a loader
  for (const f of [join(binDir, 'sriovctl-cni'), join(payload, 'oneshot')]) {
    expect(execFileSync('readelf', ['-l', f], { encoding: 'utf8' })).not.toMatch(/program interpreter/);
  }
  return version;
}
