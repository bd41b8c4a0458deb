// The self-contained executable (amd64, natively): one file that is `sriovctl` or `sriovctl-cni` by the name it
// runs under, needs nothing from the host (no node on PATH), and loads its embedded addon only from a directory
// nobody else can write, only when the bytes are the ones it was built with.
import { chmodSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { versionReply } from '../../src/cni/versions';
import { executable, PACKAGE_VERSION } from './packaged';
import { modeDir, runPackaged, tempDir } from './run-packaged';

const NOBODY = 65534;
/** A CNI STATUS call that gets as far as the addon. */
const STATUS = { CNI_COMMAND: 'STATUS', CNI_PATH: '/usr/lib/cni' };
const NETCONF = JSON.stringify({ cniVersion: '1.1.0', name: 'field', type: 'sriovctl-cni' });

describe('the packaged executable (amd64)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let cache: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    tmp = tempDir('exe');
    cache = join(tmp.dir, 'cache');
    env = { SRIOVCTL_CACHE_DIR: cache, SRIOVCTL_STATE_DIR: join(tmp.dir, 'state') };
  });
  afterEach(() => tmp.remove());

  it('is the CLI as sriovctl (and under its package name): --version prints the package version', async () => {
    for (const name of ['sriovctl', '/usr/local/bin/sriovctl', 'sriovctl-linux-amd64']) {
      expect(await runPackaged(['--version'], { name, env })).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
    }
    const st = await runPackaged(['status', '--json'], { name: 'sriovctl', env });
    expect(st).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it('is the CNI plugin as sriovctl-cni (kubelet runs it by its path): VERSION, and a CNI error for a bad call', async () => {
    const v = await runPackaged([], { name: '/opt/cni/bin/sriovctl-cni', env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout)).toEqual(versionReply());
    const bad = await runPackaged([], { name: 'sriovctl-cni', env: { ...env, CNI_COMMAND: 'ADD' }, stdin: '{' });
    expect(bad.code).not.toBe(0);
    expect(JSON.parse(bad.stdout)).toMatchObject({ code: expect.any(Number), msg: expect.any(String) });
  });

  it('under any other name: one line saying which names it answers to, exit 2, nothing run', async () => {
    for (const name of ['foo', 'sriovctl-cni.old', 'node']) {
      const r = await runPackaged(['status'], { name, env: { ...env, CNI_COMMAND: 'VERSION' } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`sriovctl: run as '${name}': this executable is 'sriovctl' (the CLI) or 'sriovctl-cni' (the CNI plugin); install or link it under one of those names\n`);
    }
    expect(() => statSync(cache)).toThrow();
  });

  it('is the bounded sysfs writer as sriovctl-sysfs-write (it ships no separate tool): one write, the errno as exit status', async () => {
    // a real sysfs attribute of a scratch veth: the writer's contract is what src/sriov/bounded-write.ts reads
    const link = `sw${process.pid.toString(16).slice(-6)}`;
    execFileSync('ip', ['link', 'add', link, 'type', 'veth', 'peer', 'name', `${link}b`]);
    try {
      const sysfs = `/sys/class/net/${link}`;
      const write = (args: string[]) => runPackaged(args, { name: 'sriovctl-sysfs-write', env });
      expect(await write([`${sysfs}/ifalias`, 'field-alias'])).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(readFileSync(`${sysfs}/ifalias`, 'utf8')).toBe('field-alias\n');
      const refused = await write([`${sysfs}/mtu`, 'not-a-number']);
      expect(refused.code).toBe(22); // EINVAL, from the kernel's store
      expect(refused.stderr).toMatch(/EINVAL/);
      expect((await write([`${sysfs}/no-such-attribute`, '1'])).code).toBe(2); // ENOENT: never created
      expect((await write(['only-one-argument'])).code).toBe(255);
    } finally {
      execFileSync('ip', ['link', 'del', link]);
    }
  });

  it('writes its addon once into a 0700 cache dir, under its hash, and loads that copy while it matches', async () => {
    expect((await runPackaged(['status'], { name: 'sriovctl', env })).code).toBe(0);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    const addons = readdirSync(cache).filter((f) => f.endsWith('.node'));
    expect(addons).toHaveLength(1);
    expect(addons[0]).toMatch(/^sriovctl-[0-9a-f]{32}\.node$/);
    const file = join(cache, addons[0]);
    const first = lstatSync(file);
    expect((await runPackaged(['status'], { name: 'sriovctl', env })).code).toBe(0);
    expect(lstatSync(file).ino).toBe(first.ino);

    // a copy that no longer matches (a torn write, a tampered file) is replaced, not loaded
    writeFileSync(file, 'not an addon');
    expect((await runPackaged(['status'], { name: 'sriovctl', env })).code).toBe(0);
    expect(readFileSync(file).length).toBe(first.size);
  });

  const untrusted: [string, (d: string) => string, RegExp][] = [
    ['world-writable', (d) => modeDir(d, 'open', 0o777), /open is writable by group or others \(mode 777\)/],
    ['owned by another user', (d) => modeDir(d, 'theirs', 0o700, NOBODY), /theirs is owned by uid 65534, not by root/],
    ['a symlink to a good directory', (d) => (symlinkSync(modeDir(d, 'real', 0o700), join(d, 'link')), join(d, 'link')), /link is a symbolic link/],
    ['below a directory another user owns', (d) => join(modeDir(d, 'theirs', 0o755, NOBODY), 'cache'), /theirs is owned by uid 65534, not by root/],
  ];
  for (const [what, make, reason] of untrusted) {
    it(`refuses a cache dir that is ${what}, saying why, and loads nothing from it`, async () => {
      const bad = make(tmp.dir);
      const r = await runPackaged(['status'], { name: 'sriovctl', env: { ...env, SRIOVCTL_CACHE_DIR: bad } });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^sriovctl: cannot start: cannot use the cache dir: .*\n$/);
      expect(r.stderr).toMatch(reason);
      expect(readdirSync(bad).filter((f) => !f.startsWith('.'))).toEqual([]);
      // the plugin says so as a CNI error object
      const cni = await runPackaged([], { name: 'sriovctl-cni', env: { ...env, ...STATUS, SRIOVCTL_CACHE_DIR: bad }, stdin: NETCONF });
      expect(cni.code).toBe(1);
      expect(JSON.parse(cni.stdout).msg).toMatch(reason);
    });
  }

  it('refuses a corrupted embedded addon: says it is corrupt, writes and loads nothing', async () => {
    // one byte of a string only the addon holds (an error label in native/connection.cc)
    const exe = readFileSync(executable('amd64'));
    const marker = Buffer.from('dup(netns fd)');
    const at = exe.indexOf(marker);
    expect(at).toBeGreaterThan(0);
    expect(exe.indexOf(marker, at + 1)).toBe(-1);
    exe[at] ^= 0x20;
    const corrupt = join(tmp.dir, 'sriovctl');
    writeFileSync(corrupt, exe);
    chmodSync(corrupt, 0o755);

    expect(await runPackaged(['--version'], { name: 'sriovctl', file: corrupt, env: { ...env, SRIOVCTL_CACHE_DIR: join(tmp.dir, 'c2') } })).toMatchObject({ code: 1 });
    const r = await runPackaged(['status'], { name: 'sriovctl', file: corrupt, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^sriovctl: cannot start: the addon embedded in ${corrupt} is corrupt \\(sha256 [0-9a-f]{64}, built as [0-9a-f]{64}\\): refusing to load it; reinstall the executable\\n$`),
    );
    expect(readdirSync(cache).filter((f) => f.endsWith('.node') || f.includes('.tmp-'))).toEqual([]);
    const cni = await runPackaged([], { name: 'sriovctl-cni', file: corrupt, env: { ...env, ...STATUS }, stdin: NETCONF });
    expect(cni.code).toBe(1);
    expect(JSON.parse(cni.stdout).msg).toMatch(/is corrupt .*refusing to load it/);
  });
});
