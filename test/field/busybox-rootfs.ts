// A node's root file system without glibc, as k3s's busybox-based image is: Debian's busybox-static and nothing
// else (checked: no ELF interpreter, no libc anywhere in it), and a way to run a program chrooted into it — in a
// private mount namespace with its own /proc (the launcher and Node read /proc/self/exe) and the host's
// /run/netns (CNI_NETNS), so nothing is mounted on the host. arm64 programs run through binfmt_misc: a private
// instance (Linux >= 6.7) in a user namespace, registering Debian's qemu-aarch64-static with the F flag (opened
// at registration, so found from inside the chroot), so the machine's own binfmt table is never touched.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { collectOutput, type ProcessOutput } from '../helpers/collect-output';
import type { Arch } from './run-packaged';
import { tempDir } from './run-packaged';

/** Debian's busybox-static (scripts/ensure-cri-deps.sh installs it). */
const BUSYBOX = '/bin/busybox';
const QEMU_AARCH64 = '/usr/bin/qemu-aarch64-static';
/** binfmt_misc's rule for aarch64 ELF executables (EM_AARCH64, as Debian's qemu-aarch64.conf has it). */
const AARCH64_ELF =
  ':sriovctl-aarch64:M::\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00' +
  ':\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:' +
  `${QEMU_AARCH64}:F`;

export interface BusyboxRootfs {
  /** The root directory (root's, 0755). */
  root: string;
  /** Its CNI bin dir, /opt/cni/bin (0755). */
  binDir: string;
  /** Runs `argv` chrooted into the root with exactly `env`; arm64 programs under qemu-user through binfmt_misc. */
  run(argv: string[], o: { env: Record<string, string>; stdin?: string; arch?: Arch }): Promise<ProcessOutput>;
  remove(): void;
}

export function busyboxRootfs(label: string): BusyboxRootfs {
  const tmp = tempDir(label);
  const root = join(tmp.dir, 'root');
  for (const d of ['', 'bin', 'proc', 'tmp', 'opt', 'opt/cni', 'opt/cni/bin', 'run', 'run/netns', 'var', 'var/run']) {
    mkdirSync(join(root, d), { recursive: true });
    chmodSync(join(root, d), d === 'tmp' ? 0o1777 : 0o755);
  }
  // busybox runs as the applet it is named after
  for (const name of ['busybox', 'sh']) {
    copyFileSync(BUSYBOX, join(root, 'bin', name));
    chmodSync(join(root, 'bin', name), 0o755);
  }
  mkdirSync(join(root, 'var', 'run', 'netns'), { mode: 0o755 });
  return {
    root,
    binDir: join(root, 'opt', 'cni', 'bin'),
    run: (argv, o) => runChrooted(root, argv, o),
    remove: () => tmp.remove(),
  };
}

function runChrooted(root: string, argv: string[], o: { env: Record<string, string>; stdin?: string; arch?: Arch }): Promise<ProcessOutput> {
  // $1: the root; the rest: the program and its arguments
  // (absolute paths: the program's environment is `env`, PATH included, and nothing else)
  // (arm64: a user namespace cannot bind the host's netns mounts; it runs no call that needs them)
  const proc = 'set -e; /bin/mount -t proc proc "$1/proc"';
  const netns = '/bin/mount --rbind /run/netns "$1/var/run/netns"';
  const binfmt = `/bin/mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; printf '%s' '${AARCH64_ELF}' > /proc/sys/fs/binfmt_misc/register`;
  const script = `${proc}; ${o.arch === 'arm64' ? binfmt : netns}; r=$1; shift; exec /usr/sbin/chroot "$r" "$@"`;
  // arm64: a user namespace owns the binfmt_misc instance (and then a pid namespace, for its /proc)
  const ns = o.arch === 'arm64' ? ['--user', '--map-root-user', '--pid', '--fork', '--mount'] : ['--mount'];
  const child = spawn('/usr/bin/unshare', [...ns, '--propagation', 'private', '--', '/bin/sh', '-c', script, 'sh', root, ...argv], {
    env: o.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => {});
  child.stdin.end(o.stdin ?? '');
  return collectOutput(child, 120_000);
}
