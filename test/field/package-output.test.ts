// What `npm run package` leaves in dist/pkg: one executable per architecture (ELF for that machine, a Node
// single executable application: its SEA fuse flipped), the static CNI shims, the daemon's systemd unit, the image
// archive, and SHA256SUMS that verify them all.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: build scripts, plain JavaScript without types
import { cRuntimeFiles } from '../../scripts/package/c-runtime.mjs';
// @ts-expect-error: build scripts, plain JavaScript without types
import { checkGlibc } from '../../scripts/package/glibc-version.mjs';
import { executable, IMAGE_ARCHIVE, PKG_DIR } from './packaged';

const EM_X86_64 = 62;
const EM_AARCH64 = 183;
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

describe('npm run package output', () => {
  it('SHA256SUMS lists the two executables, the two CNI shims, the daemon\'s unit, the man pages and the image archive, and they match', () => {
    const sums = readFileSync(`${PKG_DIR}/SHA256SUMS`, 'utf8');
    expect(sums.trim().split('\n').map((l) => l.split(/\s+/)[1])).toEqual([
      basename(executable('amd64')),
      basename(executable('arm64')),
      'sriovctl-cni-shim-linux-amd64',
      'sriovctl-cni-shim-linux-arm64',
      'sriovctl-daemon.service',
      'sriovctl.1',
      'sriovctl-cni.8',
      basename(IMAGE_ARCHIVE),
    ]);
    expect(execFileSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: PKG_DIR, encoding: 'utf8' })).toMatch(/^(.*: OK\n){8}$/);
  });

  for (const [arch, machine] of [['amd64', EM_X86_64], ['arm64', EM_AARCH64]] as const) {
    it(`sriovctl-linux-${arch} is an ELF executable for its machine with a SEA blob injected`, () => {
      const exe = readFileSync(executable(arch));
      expect(exe.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
      expect(exe.readUInt16LE(18)).toBe(machine);
      // postject flips the fuse from :0 to :1 when it injects the blob
      expect(exe.includes(`${FUSE}:1`)).toBe(true);
      expect(exe.includes(`${FUSE}:0`)).toBe(false);
    });

    it(`sriovctl-linux-${arch} carries a glibc >= 2.33 (the launcher's ld.so --argv0), the version Debian's package says`, () => {
      const runtime = (cRuntimeFiles(arch) as { name: string; source: string }[]).filter((f) => f.name === 'libc.so.6' || f.name.startsWith('ld-linux-'));
      expect(runtime).toHaveLength(2);
      const found = checkGlibc(runtime.map((f) => f.source)) as { major: number; minor: number; banner: string }[];
      const pkg = arch === 'amd64' ? 'libc6' : 'libc6-arm64-cross';
      const debian = /^(\d+\.\d+)/.exec(execFileSync('dpkg-query', ['-W', '-f', '${Version}', pkg], { encoding: 'utf8' }))![1];
      const exe = readFileSync(executable(arch));
      for (const f of found) {
        expect(`${f.major}.${f.minor}`).toBe(debian);
        // the executable embeds those very files (install-cni writes them into the payload)
        expect(exe.includes(f.banner)).toBe(true);
      }
    });
  }
});
