// `sriovctl install-cni --to <dir>` (the installer image's entry point), run from the packaged executable: what
// it installs (the shim as sriovctl-cni, or with --no-shim the launcher, and the payload: ./installed-plugin.ts), that it writes nothing when
// it is already there, that a reader never sees half a file nor a payload half-swapped, and that it refuses —
// changing nothing, in one line naming the path — every directory it must not write.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, closeSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INSTALL_LOCK_FILE, lockInstallDir } from '../../src/install/install-lock';
import { lockFd } from '../../src/fs/flock';
import { loaderArgs, privateLoaderOf } from '../../src/package/payload-layout';
import { Scratch } from '../helpers/kernel';
import { collectOutput } from '../helpers/collect-output';
import { expectInstalledPlugin } from './installed-plugin';
import { executable, shim } from './packaged';
import { modeDir, runPackaged, tempDir } from './run-packaged';
import { sriovctl } from '../helpers/cli-process';

const NOBODY = 65534;

describe('sriovctl install-cni', () => {
  let tmp: ReturnType<typeof tempDir>;
  let env: NodeJS.ProcessEnv;
  const install = (to: string, ...more: string[]) => runPackaged(['install-cni', '--to', to, ...more], { name: 'sriovctl', env });

  beforeEach(() => {
    tmp = tempDir('install');
    // no daemon serves this socket: the shim runs the payload's one-shot launcher
    env = { SRIOVCTL_CACHE_DIR: join(tmp.dir, 'cache'), SRIOVCTL_STATE_DIR: join(tmp.dir, 'state'), SRIOVCTL_SOCKET: join(tmp.dir, 'no-daemon.sock') };
  });
  afterEach(() => tmp.remove());

  /** A CNI bin dir as a node has it: root's, 0755. */
  function binDir(): string {
    const d = join(tmp.dir, 'opt-cni-bin');
    mkdirSync(d, { mode: 0o755 });
    chmodSync(d, 0o755);
    return d;
  }

  it('installs the shim as <dir>/sriovctl-cni and its payload (itself, a private glibc, the launcher), which then runs as the CNI plugin', async () => {
    const dir = binDir();
    const r = await install(dir);
    expect(r).toEqual({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: '' });
    const version = expectInstalledPlugin(dir, 'amd64');
    // with no daemon, the shim's fallback is the payload's launcher, through the link
    const fallback = await runPackaged(['--print-fallback'], { name: 'sriovctl-cni', file: join(dir, 'sriovctl-cni'), env });
    expect(fallback.stdout.trim()).toBe(join(dir, 'sriovctl.d', 'oneshot'));

    // kubelet's way in, and the payload's own launcher: both find the payload and run the executable in it
    for (const launcher of [join(dir, 'sriovctl-cni'), join(dir, 'sriovctl.d', 'oneshot'), join(dir, version, 'oneshot')]) {
      const v = await runPackaged([], { name: launcher, file: launcher, env: { ...env, CNI_COMMAND: 'VERSION' } });
      expect([launcher, v.code, v.stderr]).toEqual([launcher, 0, '']);
      expect(JSON.parse(v.stdout).supportedVersions).toContain('1.1.0');
    }
  });

  it('run from the payload (under its private loader), installs the executable it runs from, not the loader', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const payload = join(dir, readlinkSync(join(dir, 'sriovctl.d')));
    const loader = join(payload, 'lib', 'ld-linux-x86-64.so.2');
    const second = join(tmp.dir, 'second');
    mkdirSync(second, { mode: 0o755 });
    const args = ['--library-path', join(payload, 'lib'), '--argv0', 'sriovctl', join(payload, 'sriovctl'), 'install-cni', '--to', second];
    expect(await runPackaged(args, { name: loader, file: loader, env })).toEqual({ code: 0, stdout: `installed ${second}/sriovctl-cni\n`, stderr: '' });
    expectInstalledPlugin(second, 'amd64');
  });

  it('run from the payload, it runs itself again as the bounded sysfs writer through the same loader (src/package/self-executable.ts)', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const p = privateLoaderOf(join(dir, readlinkSync(join(dir, 'sriovctl.d')), 'lib', 'ld-linux-x86-64.so.2'))!;
    const s = new Scratch();
    try {
      const [nic] = s.veth('w', 'x');
      const attr = `/sys/class/net/${nic}/tx_queue_len`;
      const write = (file: string, value: string) => runPackaged([...loaderArgs(p, 'sriovctl-sysfs-write'), file, value], { name: p.loader, file: p.loader, env: {} });
      expect(await write(attr, '777')).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(readFileSync(attr, 'utf8')).toBe('777\n');
      // the exit status is the errno: ENOENT for a missing attribute
      expect((await write(`/sys/class/net/${nic}/no-such-attribute`, '1')).code).toBe(2);
    } finally {
      s.cleanup();
    }
  });

  it('--no-shim installs the launcher itself as <dir>/sriovctl-cni (one-shot only); the shim again replaces it', async () => {
    const dir = binDir();
    expect(await install(dir, '--no-shim')).toEqual({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: '' });
    const version = expectInstalledPlugin(dir, 'amd64', 'oneshot');
    const v = await runPackaged([], { name: 'sriovctl-cni', file: join(dir, 'sriovctl-cni'), env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect([v.code, v.stderr]).toEqual([0, '']);
    expect((await install(dir, '--no-shim')).stdout).toBe(`${dir}/sriovctl-cni is up to date\n`);
    // the same payload: only the plugin changes
    expect(await install(dir)).toEqual({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: '' });
    expect(expectInstalledPlugin(dir, 'amd64')).toBe(version);
  });

  it('a launcher without its payload answers a CNI error (110) naming what is missing, on stdout and stderr', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const lone = join(tmp.dir, 'lone');
    mkdirSync(lone, { mode: 0o755 });
    writeFileSync(join(lone, 'sriovctl-cni'), readFileSync(join(dir, 'sriovctl.d', 'oneshot')), { mode: 0o755 });
    const r = await runPackaged([], { name: 'sriovctl-cni', file: join(lone, 'sriovctl-cni'), env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ cniVersion: '1.0.0', code: 110, msg: 'sriovctl-cni cannot start', details: `${lone}/sriovctl.d: No such file or directory` });
    expect(r.stderr).toBe(`sriovctl-cni: cannot start: ${lone}/sriovctl.d: No such file or directory\n`);
  });

  it('is idempotent: the same content again writes nothing', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const before = identities(dir);
    const again = await install(dir);
    expect(again).toEqual({ code: 0, stdout: `${dir}/sriovctl-cni is up to date\n`, stderr: '' });
    expect(identities(dir)).toEqual(before);
  });

  it('replaces another version by rename: a reader holding the old plugin still reads all of it, and no temp file stays', async () => {
    const dir = binDir();
    const target = join(dir, 'sriovctl-cni');
    const old = Buffer.alloc(3 << 20, 0x5a);
    writeFileSync(target, old, { mode: 0o755 });
    const oldIno = statSync(target).ino;
    const reader = openSync(target, 'r');
    try {
      const r = await install(dir);
      expect(r.code).toBe(0);
      expect(statSync(target).ino).not.toBe(oldIno);
      expectInstalledPlugin(dir, 'amd64');
      // the old inode is whole: a kubelet that opened it before the rename ran the old plugin, never a mix
      const seen = Buffer.alloc(old.length + 1);
      expect(readSync(reader, seen, 0, seen.length, 0)).toBe(old.length);
      expect(seen.subarray(0, old.length).equals(old)).toBe(true);
    } finally {
      closeSync(reader);
    }
  });

  it('upgrades a payload by swapping the link: the payload it replaces stays (a launcher may have just resolved it), older ones go', async () => {
    const dir = binDir();
    const [older, replaced] = ['sriovctl.d-1111111111111111', 'sriovctl.d-2222222222222222'];
    for (const v of [older, replaced]) {
      mkdirSync(join(dir, v, 'lib'), { recursive: true, mode: 0o755 });
      writeFileSync(join(dir, v, 'sriovctl'), `old ${v}`, { mode: 0o755 });
    }
    symlinkSync(replaced, join(dir, 'sriovctl.d'));
    const held = openSync(join(dir, replaced, 'sriovctl'), 'r');
    try {
      expect((await install(dir)).code).toBe(0);
      const version = readlinkSync(join(dir, 'sriovctl.d'));
      expect(readdirSync(dir).sort()).toEqual([INSTALL_LOCK_FILE, 'sriovctl-cni', 'sriovctl.d', version, replaced].sort());
      expect(readFileSync(join(dir, replaced, 'sriovctl'), 'utf8')).toBe(`old ${replaced}`);
      // the next upgrade (here: the same content again, the link already right) leaves the replaced one alone
      expect((await install(dir)).stdout).toBe(`${dir}/sriovctl-cni is up to date\n`);
    } finally {
      closeSync(held);
    }
  });

  it('rewrites a payload dir that was changed (a file damaged) before pointing the link at it', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const version = readlinkSync(join(dir, 'sriovctl.d'));
    writeFileSync(join(dir, version, 'lib', 'libc.so.6'), 'damaged', { mode: 0o755 });
    const r = await install(dir);
    expect(r).toEqual({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: '' });
    expect(expectInstalledPlugin(dir, 'amd64')).toBe(version);
    const v = await runPackaged([], { name: 'sriovctl-cni', file: join(dir, 'sriovctl-cni'), env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect(v.code).toBe(0);
  });

  it('fails whole when the copy cannot finish (a full file system): the old plugin stays, no temp file', async () => {
    const dir = binDir();
    // a tmpfs smaller than the executable: the write fails part-way
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0755', 'tmpfs', dir]);
    try {
      writeFileSync(join(dir, 'sriovctl-cni'), 'old plugin', { mode: 0o755 });
      const r = await install(dir);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^sriovctl: install-cni --to ${dir}: cannot write ${dir}/sriovctl\\.d-[0-9a-f]{16}: .*ENOSPC.*\\n$`));
      expect(readdirSync(dir).sort()).toEqual([INSTALL_LOCK_FILE, 'sriovctl-cni']);
      expect(readFileSync(join(dir, 'sriovctl-cni'), 'utf8')).toBe('old plugin');
    } finally {
      execFileSync('umount', [dir]);
    }
  });

  const refusals: [string, (d: string) => string, RegExp][] = [
    ['a missing directory', (d) => join(d, 'missing'), /missing does not exist$/],
    ['a file', (d) => (writeFileSync(join(d, 'a-file'), 'x'), join(d, 'a-file')), /a-file is not a directory$/],
    ['a world-writable directory', (d) => modeDir(d, 'open', 0o777), /open is writable by group or others \(mode 777\); refusing to install there$/],
    ['a group-writable directory', (d) => modeDir(d, 'group', 0o775), /group is writable by group or others \(mode 775\); refusing to install there$/],
    ['a sticky world-writable directory', (d) => modeDir(d, 'sticky', 0o1777), /sticky is writable by group or others \(mode 1777\); refusing to install there$/],
    ['a directory another user owns', (d) => modeDir(d, 'theirs', 0o755, NOBODY), /theirs is owned by uid 65534, not by root; refusing to install there$/],
    ['a directory below one another user may write', (d) => join(modeDir(d, 'openparent', 0o777), 'bin'), /openparent is writable by group or others \(mode 777\); refusing to install there$/],
  ];

  for (const [what, make, message] of refusals) {
    it(`refuses ${what}, in one line naming it, and writes nothing`, async () => {
      const to = make(tmp.dir);
      if (to.endsWith('/bin')) mkdirSync(to, { mode: 0o755 });
      const before = snapshot(tmp.dir);
      const r = await install(to);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^sriovctl: install-cni --to ${to}: `));
      expect(lines[0]).toMatch(message);
      expect(snapshot(tmp.dir)).toEqual(before);
    });
  }

  /** The executable with `n` zero bytes appended: it runs the same, but its payload is another version. */
  function variant(n: number): string {
    const file = join(tmp.dir, `sriovctl-variant-${n}`);
    copyFileSync(executable('amd64'), file);
    appendFileSync(file, Buffer.alloc(n));
    chmodSync(file, 0o755);
    return file;
  }
  const installFrom = (file: string, to: string, ...more: string[]) => runPackaged(['install-cni', '--to', to, ...more], { name: 'sriovctl', file, env });
  const payloads = (dir: string) => readdirSync(dir).filter((n) => /^sriovctl\.d-[0-9a-f]{16}$/.test(n)).sort();

  it('keeps the payload a plugin call in flight runs from through two upgrades (the launcher holds it), and removes it at the next one after', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const first = readlinkSync(join(dir, 'sriovctl.d'));
    // kubelet's way in: the shim (no daemon) execs the payload's launcher, which runs the plugin: an ADD, waiting for its config
    const cni = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'in-flight', CNI_NETNS: '/var/run/netns/none', CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
    const call = spawn(join(dir, 'sriovctl-cni'), [], { env: { PATH: '/nonexistent', ...env, ...cni }, stdio: ['pipe', 'pipe', 'pipe'] });
    const answered = collectOutput(call, 120_000);
    try {
      // the launcher's shared flock on that payload dir, seen in /proc/locks (it passes through exec to the plugin)
      const ino = statSync(join(dir, first)).ino;
      for (let i = 0; !readFileSync('/proc/locks', 'utf8').split('\n').some((l) => / FLOCK +ADVISORY +READ /.test(l) && l.includes(`:${ino} `)); i++) {
        if (i > 6000 || call.exitCode !== null) throw new Error(`no shared flock on ${first} from the plugin call`);
        await new Promise((r) => setTimeout(r, 10));
      }
      const [second, third] = [variant(1), variant(2)];
      expect((await installFrom(second, dir)).code).toBe(0);
      const r = await installFrom(third, dir);
      expect([r.code, r.stderr]).toEqual([0, '']);
      // first is older than the one replaced (second's), and still there: the call runs from it
      expect(payloads(dir)).toHaveLength(3);
      expect(payloads(dir)).toContain(first);
      // the call ends from its payload as it would have without the upgrades: a config it cannot decode is CNI error 6
      call.stdin.end('{');
      const v = await answered;
      expect([v.code, JSON.parse(v.stdout).code]).toEqual([1, 6]);
      // let go: the next upgrade removes it (and the one before the one replaced)
      expect((await installFrom(variant(3), dir)).code).toBe(0);
      expect(payloads(dir)).toHaveLength(2);
      expect(payloads(dir)).not.toContain(first);
    } finally {
      call.kill('SIGKILL');
      await answered.catch(() => undefined);
    }
  });

  it('a launcher whose payload an installer is removing (an exclusive flock on it) runs the payload the link names now', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const old = readlinkSync(join(dir, 'sriovctl.d'));
    expect((await installFrom(variant(1), dir)).code).toBe(0);
    const current = readlinkSync(join(dir, 'sriovctl.d'));
    expect(current).not.toBe(old);
    // what the installer holds while it removes a payload
    const removing = openSync(join(dir, old), constants.O_RDONLY | constants.O_DIRECTORY);
    expect(lockFd(removing, { exclusive: true, timeoutMs: 0 })).toBe(true);
    const cni = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'retry', CNI_NETNS: '/var/run/netns/none', CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
    // the old payload's own launcher, as the shim's exec of sriovctl.d/oneshot just before the link moved
    const call = spawn(join(dir, old, 'oneshot'), [], { env: { PATH: '/nonexistent', ...env, ...cni }, stdio: ['pipe', 'pipe', 'pipe'] });
    const answered = collectOutput(call, 120_000);
    try {
      // the plugin runs under a payload's loader: /proc/<pid>/exe says which payload
      const loaderOf = (payload: string) => join(dir, payload, 'lib', 'ld-linux-x86-64.so.2');
      let exe = '';
      for (let i = 0; exe !== loaderOf(current) && exe !== loaderOf(old); i++) {
        if (i > 6000 || call.exitCode !== null) throw new Error(`the launcher never ran a payload's loader (last ${exe})`);
        await new Promise((r) => setTimeout(r, 10));
        try {
          exe = readlinkSync(`/proc/${call.pid}/exe`);
        } catch {
          exe = '';
        }
      }
      expect(exe).toBe(loaderOf(current));
      call.stdin.end('{');
      const v = await answered;
      expect([v.code, JSON.parse(v.stdout).code]).toEqual([1, 6]);
    } finally {
      closeSync(removing);
      call.kill('SIGKILL');
      await answered.catch(() => undefined);
    }
  });

  it('two installers at once on one directory (the host and the DaemonSet) both succeed and leave one consistent plugin', async () => {
    const dir = binDir();
    const other = variant(1);
    const [a, b] = await Promise.all([install(dir), installFrom(other, dir)]);
    expect([a, b]).toEqual([0, 0].map(() => ({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: '' })));
    // whichever went second: its payload is the one linked, whole, and the shim in front of it; nothing half-written
    const version = readlinkSync(join(dir, 'sriovctl.d'));
    const linked = readFileSync(join(dir, version, 'sriovctl'));
    expect([readFileSync(executable('amd64')), readFileSync(other)].filter((e) => e.equals(linked))).toHaveLength(1);
    expect(readFileSync(join(dir, 'sriovctl-cni')).equals(readFileSync(shim('amd64')))).toBe(true);
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
    expect(payloads(dir)).toHaveLength(2);
    const v = await runPackaged([], { name: 'sriovctl-cni', file: join(dir, 'sriovctl-cni'), env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect([v.code, v.stderr]).toEqual([0, '']);
  });

  it('removes what a killed install left (a temp payload dir of "pid 1"); leaves a symlink named like one alone, unfollowed, and says so', async () => {
    const dir = binDir();
    const stale = join(dir, '.sriovctl.d-0123456789abcdef.tmp-1');
    mkdirSync(join(stale, 'lib'), { recursive: true });
    writeFileSync(join(stale, 'sriovctl'), 'half an executable');
    const victim = modeDir(tmp.dir, 'victim', 0o755);
    writeFileSync(join(victim, 'precious'), 'keep me');
    const planted = join(dir, '.sriovctl.d-fedcba9876543210.tmp-1');
    symlinkSync(victim, planted);
    const r = await install(dir);
    expect(r).toEqual({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: `sriovctl: warning: left ${planted} alone: a symlink, where an install leaves a directory\n` });
    expect(existsSync(stale)).toBe(false);
    expect(readlinkSync(planted)).toBe(victim);
    expect(readFileSync(join(victim, 'precious'), 'utf8')).toBe('keep me');
  });

  it('waits for another installer on the directory, and after --lock-timeout gives up in one line naming the lock file and its holder', async () => {
    const dir = binDir();
    const lock = lockInstallDir(dir);
    try {
      const r = await install(dir, '--lock-timeout', '0.5');
      expect([r.code, r.stdout]).toEqual([1, '']);
      expect(r.stderr).toMatch(
        new RegExp(`^sriovctl: install-cni --to ${dir}: another installer is installing into ${dir}: it holds ${dir}/\\${INSTALL_LOCK_FILE} \\(held by install-cni pid ${process.pid} on ${hostname()} since [^)]+\\); gave up after \\d+\\.\\d s\\n$`),
      );
      expect(readdirSync(dir)).toEqual([INSTALL_LOCK_FILE]);
    } finally {
      lock.release();
    }
    expect((await install(dir)).code).toBe(0);
    expectInstalledPlugin(dir, 'amd64');
  });

  it('refuses a command line without --to (usage, exit 2)', async () => {
    const r = await install('');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('sriovctl: install-cni --to : --to needs a directory\n');
    const none = await runPackaged(['install-cni'], { name: 'sriovctl', env });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/required option '--to <dir>' not specified/);
  });

  it('refuses from a Node.js installation (npm, a checkout): there is no self-contained executable to copy', async () => {
    const dir = binDir();
    const r = await sriovctl({ stateDir: join(tmp.dir, 'state'), sysfsRoot: '/sys' }, ['install-cni', '--to', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/install-cni copies the self-contained executable .*; this sriovctl runs on .*node/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

/**
 * Inode, mtime and ctime of every entry in a CNI bin dir and its payload (the link not followed); not the installers'
 * lock file, whose holder line every install rewrites.
 */
function identities(dir: string): string[] {
  const version = readlinkSync(join(dir, 'sriovctl.d'));
  const paths = [...readdirSync(dir).filter((n) => n !== INSTALL_LOCK_FILE), ...readdirSync(join(dir, version), { recursive: true }).map((p) => join(version, String(p)))];
  return paths.sort().map((p) => {
    const st = lstatSync(join(dir, p));
    return `${p} ${st.ino} ${st.mtimeMs} ${st.ctimeMs}`;
  });
}

/** Every path under `dir` (the cache dir excepted: it is the executable's own) with its mode and size. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.name === 'cache' && d === dir) continue;
      const st = statSync(p);
      out.push(`${p} ${st.mode.toString(8)} ${st.size}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort().concat(existsSync(dir) ? [] : ['gone']);
}
