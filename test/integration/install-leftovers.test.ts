// install-cni's lock and clean-up across real processes (test/integration/install-child.ts runs its path with a
// payload read from files, a FIFO among them to stop a copy part-way): an installer SIGKILLed mid-copy leaves its
// temp dir, and the next one removes it and installs; two installers on one directory take turns and end with one
// consistent payload; one that cannot get the lock in time names the lock file and its holder; what is not ours
// (a symlink named like a temp dir, another user's dir, a link inside an old payload) is left alone, never
// followed; an old payload a launcher holds is kept; an upgrade replaces the plugin by rename (a reader of the old
// one reads it whole, the name holds a new file). (The packaged plugin's own launcher: test/field/install-cni.)
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chownSync, closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INSTALL_LOCK_FILE, lockInstallDir } from '../../src/install/install-lock';
import { killChild, spawnTs, waitForExit, waitForLine } from '../helpers/ts-child';

const CHILD = join(__dirname, 'install-child.ts');
const NOBODY = 65534;
const LIBC = Buffer.from('the private libc.so.6 of this test');

let tmp: string;
let bin: string;
let children: ChildProcess[];

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sriovctl-install-leftovers-'));
  bin = join(tmp, 'opt-cni-bin');
  mkdirSync(bin, { mode: 0o755 });
  children = [];
});

afterEach(async () => {
  for (const c of children) await killChild(c);
  rmSync(tmp, { recursive: true, force: true });
});

/** A payload source (see install-child.ts) whose files say `name`; with `fifo`, its lib/libc.so.6 is a FIFO. */
function source(name: string, fifo = false): string {
  const dir = join(tmp, `source-${name}`);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'sriovctl'), Buffer.alloc(1 << 20, name));
  writeFileSync(join(dir, 'oneshot'), `launcher ${name}`);
  writeFileSync(join(dir, 'lib', 'ld-linux-x86-64.so.2'), `loader ${name}`);
  writeFileSync(join(dir, 'plugin'), `shim ${name}`);
  if (fifo) execFileSync('mkfifo', ['-m', '0600', join(dir, 'lib', 'libc.so.6')]);
  else writeFileSync(join(dir, 'lib', 'libc.so.6'), LIBC);
  return dir;
}

function install(src: string, lockTimeout?: string): ChildProcess {
  const c = spawnTs(CHILD, ['install', bin, src, ...(lockTimeout === undefined ? [] : [lockTimeout])]);
  children.push(c);
  return c;
}

async function installed(src: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return waitForExit(install(src));
}

/** Polls (the machine is busy: generous) until `ready` holds; a hang guard, not a measurement. */
async function until<T>(what: string, ready: () => T | null | undefined): Promise<T> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 5))) {
    const v = ready();
    if (v !== null && v !== undefined && (v as unknown) !== false) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The write end of a FIFO, once a reader has it open (O_NONBLOCK: ENXIO until then). */
function fifoWriter(fifo: string): Promise<number> {
  return until(`a reader of ${fifo}`, () => {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
      return null;
    }
  });
}

async function feed(fifo: string): Promise<void> {
  const fd = await fifoWriter(fifo);
  writeSync(fd, LIBC);
  closeSync(fd);
}

const isTemp = (name: string) => name.includes('.tmp-');
const tempNames = () => readdirSync(bin).filter(isTemp);

/**
 * Starts an install of `src` (whose libc.so.6 is a FIFO) and returns once it is blocked part-way through copying
 * the payload, holding the install lock: its temp dir is there, and its copy has the FIFO open.
 */
async function blockedMidCopy(src: string): Promise<{ child: ChildProcess; writer: number; temp: string }> {
  const child = install(src);
  const fifo = join(src, 'lib', 'libc.so.6');
  await feed(fifo); // the hash reads it first
  const temp = await until('the temp payload dir', () => tempNames()[0]);
  const writer = await fifoWriter(fifo); // the copy opened it: the child now blocks reading
  return { child, writer, temp };
}

/** Asserts the link points at a whole payload of `src`'s files and sriovctl-cni is its plugin; returns its name. */
function expectPayloadOf(src: string): string {
  const version = readlinkSync(join(bin, 'sriovctl.d'));
  expect(version).toMatch(/^sriovctl\.d-[0-9a-f]{16}$/);
  const files = readdirSync(join(bin, version), { recursive: true }).map(String).sort();
  expect(files).toEqual(['lib', 'lib/ld-linux-x86-64.so.2', 'lib/libc.so.6', 'oneshot', 'sriovctl']);
  for (const f of files.filter((f) => f !== 'lib')) expect([f, readFileSync(join(bin, version, f)).equals(readFileSync(join(src, f)))]).toEqual([f, true]);
  expect(readFileSync(join(bin, 'sriovctl-cni'), 'utf8')).toBe(readFileSync(join(src, 'plugin'), 'utf8'));
  return version;
}

describe('install-cni: an upgrade replaces the plugin by rename, never in place', () => {
  it('a reader that opened the old plugin reads it whole after the upgrade; the name holds a new file, and no temp file is left', async () => {
    const plugin = join(bin, 'sriovctl-cni');
    const old = source('old');
    // big enough that a reader (a kubelet running it) is still part-way through when the upgrade comes
    writeFileSync(join(old, 'plugin'), Buffer.alloc(1 << 20, 'old plugin '));
    expect((await installed(old)).code).toBe(0);
    const fd = openSync(plugin, constants.O_RDONLY);
    try {
      const oldInode = fstatSync(fd).ino;
      const half = Buffer.alloc(1 << 19);
      expect(readSync(fd, half, 0, half.length, null)).toBe(half.length);

      const next = source('next');
      writeFileSync(join(next, 'plugin'), Buffer.alloc(1 << 20, 'next plugin '));
      expect((await installed(next)).code).toBe(0);
      const rest = readFileSync(fd);
      expect(Buffer.concat([half, rest]).equals(readFileSync(join(old, 'plugin'))), 'the old plugin, read through the fd held across the upgrade').toBe(true);
      expect(statSync(plugin).ino).not.toBe(oldInode);
      expect(readFileSync(plugin).equals(readFileSync(join(next, 'plugin')))).toBe(true);
      expect(tempNames()).toEqual([]);
    } finally {
      closeSync(fd);
    }
  });
});

describe('install-cni: a killed installer, and two at once', () => {
  it('SIGKILLed mid-copy, it leaves its temp dir and the old payload in use; the next install removes the temp dir and installs', async () => {
    const old = source('old');
    expect((await installed(old)).stdout).toBe(`starting\ninstalled ${bin}/sriovctl-cni\nexit 0\n`);
    const oldVersion = expectPayloadOf(old);

    const next = source('next', true);
    const { child, writer, temp } = await blockedMidCopy(next);
    child.kill('SIGKILL');
    expect((await waitForExit(child)).signal).toBe('SIGKILL');
    closeSync(writer);
    // what the crash left: a temp dir with the payload part-written (the last file empty); the old plugin whole
    expect(temp).toMatch(new RegExp(`^\\.sriovctl\\.d-[0-9a-f]{16}\\.tmp-${child.pid}-[0-9a-f]{8}$`));
    expect(readFileSync(join(bin, temp, 'sriovctl')).equals(readFileSync(join(next, 'sriovctl')))).toBe(true);
    expect(lstatSync(join(bin, temp, 'lib', 'libc.so.6')).size).toBe(0);
    expect(expectPayloadOf(old)).toBe(oldVersion);

    // the next installer (a container's is pid 1 again: the pid in the name means nothing) cleans up and installs
    rmSync(join(next, 'lib', 'libc.so.6'));
    writeFileSync(join(next, 'lib', 'libc.so.6'), LIBC);
    const r = await installed(next);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, `starting\ninstalled ${bin}/sriovctl-cni\nexit 0\n`, '']);
    const version = expectPayloadOf(next);
    expect(readdirSync(bin).sort()).toEqual([INSTALL_LOCK_FILE, 'sriovctl-cni', 'sriovctl.d', oldVersion, version].sort());
  });

  it('two installers on one directory take turns: the second waits for the first, and the last one’s payload is whole and in use', async () => {
    const first = source('first', true);
    const second = source('second');
    const { child: one, writer } = await blockedMidCopy(first);
    const two = install(second);
    // the second is running and asking for the lock (without the lock it would now install under the first one's feet)
    await waitForLine(two, /^starting$/);
    await new Promise((r) => setTimeout(r, 500));
    expect(lstatSync(join(bin, INSTALL_LOCK_FILE)).isFile()).toBe(true);
    expect(readFileSync(join(bin, INSTALL_LOCK_FILE), 'utf8')).toMatch(new RegExp(`^held by install-cni pid ${one.pid} on ${hostname()} since `));
    writeSync(writer, LIBC);
    closeSync(writer);
    const [r1, r2] = await Promise.all([waitForExit(one), waitForExit(two)]);
    expect([r1.code, r1.stdout, r1.stderr]).toEqual([0, `starting\ninstalled ${bin}/sriovctl-cni\nexit 0\n`, '']);
    expect([r2.code, r2.stdout, r2.stderr]).toEqual([0, `installed ${bin}/sriovctl-cni\nexit 0\n`, '']);
    const version = expectPayloadOf(second);
    expect(tempNames()).toEqual([]);
    // the first one's payload, the one replaced, stays (a launcher may have just resolved it)
    expect(readdirSync(bin).filter((n) => n.startsWith('sriovctl.d-') && n !== version)).toHaveLength(1);
    // the holder line is cleared on release: a later waiter never names a holder that has gone
    expect(readFileSync(join(bin, INSTALL_LOCK_FILE), 'utf8')).toBe('');
  });

  it('gives up after --lock-timeout, naming the lock file and its holder, and writes nothing', async () => {
    const lock = lockInstallDir(bin);
    try {
      const r = await waitForExit(install(source('late'), '0.3'));
      expect(r.code).toBe(0); // the child reports install-cni's status on stdout
      expect(r.stdout).toMatch(
        new RegExp(`^starting\\nerror another installer is installing into ${bin}: it holds ${bin}/\\${INSTALL_LOCK_FILE} \\(held by install-cni pid ${process.pid} on ${hostname()} since [^)]+\\); gave up after \\d+\\.\\d s\\nexit 1\\n$`),
      );
      expect(readdirSync(bin)).toEqual([INSTALL_LOCK_FILE]);
    } finally {
      lock.release();
    }
  });
});

describe('install-cni: what earlier installs left, and what is not theirs', () => {
  it('removes stale temp dirs, links and files of ours; leaves alone, unfollowed, a symlink named like a temp dir, another user’s dir and an old payload holding a link', async () => {
    const victim = join(tmp, 'victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'precious'), 'keep me');
    const ours = [
      ['.sriovctl.d-1111111111111111.tmp-1', 'dir'],
      ['.sriovctl.d-2222222222222222.tmp-1-0a0b0c0d', 'dir'],
      ['.sriovctl.d.tmp-1', 'link'],
      ['.sriovctl-cni.tmp-1-0', 'file'],
      ['sriovctl.d-3333333333333333', 'dir'],
    ] as const;
    for (const [name, kind] of ours) {
      if (kind === 'dir') {
        mkdirSync(join(bin, name, 'lib'), { recursive: true });
        writeFileSync(join(bin, name, 'lib', 'libc.so.6'), 'half');
      } else if (kind === 'link') symlinkSync(victim, join(bin, name));
      else writeFileSync(join(bin, name), 'half a plugin');
    }
    const planted = '.sriovctl.d-4444444444444444.tmp-1';
    symlinkSync(victim, join(bin, planted));
    const theirs = '.sriovctl.d-5555555555555555.tmp-1';
    mkdirSync(join(bin, theirs));
    writeFileSync(join(bin, theirs, 'f'), 'theirs');
    chownSync(join(bin, theirs), NOBODY, NOBODY);
    const linked = 'sriovctl.d-6666666666666666';
    mkdirSync(join(bin, linked, 'lib'), { recursive: true });
    symlinkSync(join(victim, 'precious'), join(bin, linked, 'lib', 'libc.so.6'));

    const src = source('new');
    const r = await installed(src);
    expect([r.code, r.stdout]).toEqual([0, `starting\ninstalled ${bin}/sriovctl-cni\nexit 0\n`]);
    expect(r.stderr.split('\n').sort()).toEqual(
      [
        '',
        `sriovctl: warning: left ${bin}/${planted} alone: a symlink, where an install leaves a directory`,
        `sriovctl: warning: left ${bin}/${theirs} alone: owned by uid ${NOBODY}, not by root`,
        `sriovctl: warning: left ${bin}/${linked} alone: ${bin}/${linked}/lib/libc.so.6 is a symlink, where an install leaves a file`,
      ].sort(),
    );
    const version = expectPayloadOf(src);
    expect(readdirSync(bin).sort()).toEqual([INSTALL_LOCK_FILE, planted, theirs, 'sriovctl-cni', 'sriovctl.d', version, linked].sort());
    // nothing was followed: the victim's file, the planted link, the link inside the payload are all as they were
    expect(readdirSync(victim)).toEqual(['precious']);
    expect(readFileSync(join(victim, 'precious'), 'utf8')).toBe('keep me');
    expect(readlinkSync(join(bin, planted))).toBe(victim);
    expect(readlinkSync(join(bin, linked, 'lib', 'libc.so.6'))).toBe(join(victim, 'precious'));
    expect(readFileSync(join(bin, theirs, 'f'), 'utf8')).toBe('theirs');
  });

  it('a leftover it cannot remove (a mount inside) is reported, and the install goes on', async () => {
    const stale = join(bin, '.sriovctl.d-8888888888888888.tmp-1');
    mkdirSync(join(stale, 'lib'), { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', join(stale, 'lib')]);
    try {
      const src = source('past-a-mount');
      const r = await installed(src);
      expect([r.code, r.stdout]).toEqual([0, `starting\ninstalled ${bin}/sriovctl-cni\nexit 0\n`]);
      expect(r.stderr).toMatch(new RegExp(`^sriovctl: warning: could not remove ${stale}: .*EBUSY.*\n$`));
      expectPayloadOf(src);
    } finally {
      execFileSync('umount', [join(stale, 'lib')]);
    }
  });

  it('at an upgrade, keeps an old payload a launcher holds (a shared flock) and the one replaced; removes the others, and the held one once let go', async () => {
    const [a, b, c] = [source('a'), source('b'), source('c')];
    expect((await installed(a)).code).toBe(0);
    const va = expectPayloadOf(a);
    expect((await installed(b)).code).toBe(0);
    const vb = expectPayloadOf(b);
    const holder = spawnTs(CHILD, ['hold', join(bin, va)]);
    children.push(holder);
    await waitForLine(holder, /^held$/);
    const unused = 'sriovctl.d-7777777777777777';
    mkdirSync(join(bin, unused, 'lib'), { recursive: true, mode: 0o755 });

    // a → b → c: a is older than the one replaced (b), but a plugin runs from it
    const r = await installed(c);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const vc = expectPayloadOf(c);
    expect(readdirSync(bin).filter((n) => n.startsWith('sriovctl.d-')).sort()).toEqual([va, vb, vc].sort());
    expect(existsSync(join(bin, va, 'sriovctl'))).toBe(true);

    // let go: the next upgrade removes it (and b, now older than the one replaced)
    await killChild(holder);
    expect((await installed(a)).code).toBe(0);
    expect(readlinkSync(join(bin, 'sriovctl.d'))).toBe(va);
    // a was whole, so only the link moved back to it; c is the one replaced, b is older and goes
    expect(readdirSync(bin).filter((n) => n.startsWith('sriovctl.d-')).sort()).toEqual([va, vc].sort());
  });
});
