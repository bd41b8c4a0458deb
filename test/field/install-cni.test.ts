// `sriovctl install-cni --to <dir>` (the installer image's entry point), run from the packaged executable: what
// it installs, that it writes nothing when it is already there, that a reader never sees half a file, and that
// it refuses — changing nothing, in one line naming the path — every directory it must not write.
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executable } from './packaged';
import { modeDir, runPackaged, tempDir } from './run-packaged';
import { sriovctl } from '../helpers/cli-process';

const EXE = executable('amd64');
const NOBODY = 65534;

describe('sriovctl install-cni', () => {
  let tmp: ReturnType<typeof tempDir>;
  let env: NodeJS.ProcessEnv;
  const install = (to: string, ...more: string[]) => runPackaged(['install-cni', '--to', to, ...more], { name: 'sriovctl', env });

  beforeEach(() => {
    tmp = tempDir('install');
    env = { SRIOVCTL_CACHE_DIR: join(tmp.dir, 'cache'), SRIOVCTL_STATE_DIR: join(tmp.dir, 'state') };
  });
  afterEach(() => tmp.remove());

  /** A CNI bin dir as a node has it: root's, 0755. */
  function binDir(): string {
    const d = join(tmp.dir, 'opt-cni-bin');
    mkdirSync(d, { mode: 0o755 });
    chmodSync(d, 0o755);
    return d;
  }

  it('installs itself as <dir>/sriovctl-cni (0755, the same bytes), which then runs as the CNI plugin', async () => {
    const dir = binDir();
    const r = await install(dir);
    expect(r).toEqual({ code: 0, stdout: `installed ${dir}/sriovctl-cni\n`, stderr: '' });
    const target = join(dir, 'sriovctl-cni');
    expect(statSync(target).mode & 0o7777).toBe(0o755);
    expect(readFileSync(target).equals(readFileSync(EXE))).toBe(true);
    expect(readdirSync(dir)).toEqual(['sriovctl-cni']);

    const v = await runPackaged([], { name: target, file: target, env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout).supportedVersions).toContain('1.1.0');
  });

  it('is idempotent: the same content again writes nothing', async () => {
    const dir = binDir();
    expect((await install(dir)).code).toBe(0);
    const first = statSync(join(dir, 'sriovctl-cni'));
    const again = await install(dir);
    expect(again).toEqual({ code: 0, stdout: `${dir}/sriovctl-cni is up to date\n`, stderr: '' });
    const second = statSync(join(dir, 'sriovctl-cni'));
    expect([second.ino, second.mtimeMs, second.ctimeMs]).toEqual([first.ino, first.mtimeMs, first.ctimeMs]);
  });

  it('replaces another version by rename: a reader holding the old file still reads all of it, and no temp file stays', async () => {
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
      expect(readFileSync(target).equals(readFileSync(EXE))).toBe(true);
      // the old inode is whole: a kubelet that opened it before the rename ran the old plugin, never a mix
      const seen = Buffer.alloc(old.length + 1);
      expect(readSync(reader, seen, 0, seen.length, 0)).toBe(old.length);
      expect(seen.subarray(0, old.length).equals(old)).toBe(true);
    } finally {
      closeSync(reader);
    }
    expect(readdirSync(dir)).toEqual(['sriovctl-cni']);
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
      expect(r.stderr).toMatch(new RegExp(`^sriovctl: install-cni --to ${dir}: cannot write ${dir}/sriovctl-cni: .*ENOSPC.*\\n$`));
      expect(readdirSync(dir)).toEqual(['sriovctl-cni']);
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
