// Runs a program built for `arch` on this machine: natively when it is ours, else under Debian's
// qemu-user-static with the cross toolchain's libraries (/usr/aarch64-linux-gnu) as the root for its loader.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const HOST = process.arch === 'x64' ? 'amd64' : process.arch;
const QEMU = { arm64: ['qemu-aarch64-static', '-L', '/usr/aarch64-linux-gnu'] };

/** Resolves to { stdout, stderr }; rejects with them when the program fails. */
export function runUnder(arch, program, args) {
  const [cmd, argv] = arch === HOST ? [program, args] : [QEMU[arch][0], [...QEMU[arch].slice(1), program, ...args]];
  return promisify(execFile)(cmd, argv, { maxBuffer: 16 << 20 });
}
