// `install-cni`'s options for the cluster's installer DaemonSet, with a plain file standing in for the plugin's
// launcher and payload (the packaged ones are the field tier's, test/field/install-cni.test.ts): `--also-as <name>` installs the plugin under a second name (sriov-cni's
// `sriov`), `--then-wait` keeps the container alive until the pod is stopped.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installCni, untilStopped, type PluginInstaller } from '../../src/cli/install-cni';
import { installExecutable } from '../../src/install/install-executable';
import { INSTALL_LOCK_FILE } from '../../src/install/install-lock';
import type { CommandIo } from '../../src/cli/command-kit';
import { CliError, ExitCode } from '../../src/cli/exit-codes';
import { Output } from '../../src/cli/output';

const DIST = resolve(__dirname, '..', '..', 'dist');

describe('install-cni --also-as / --then-wait', () => {
  let dir: string;
  let bin: string;
  let self: string;
  let printed: string;
  /** Installs `file` as the plugin, as the packaged installer installs its launcher. */
  const asPlugin = (file: string): PluginInstaller => (lock) => installExecutable({ file }, lock.dir, 'sriovctl-cni');
  let io: CommandIo;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sriovctl-install-cni-'));
    bin = join(dir, 'opt-cni-bin');
    mkdirSync(bin);
    chmodSync(bin, 0o755);
    self = join(dir, 'sriovctl');
    copyFileSync('/bin/true', self);
    printed = '';
    io = { out: new Output({ quiet: false, verbose: false }, { write: (s: string) => (printed += s) }, { write: () => undefined }) } as CommandIo;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('installs the plugin as sriovctl-cni and the second name as a hard link of it; again, writes nothing', async () => {
    expect(await installCni(io, { to: bin, alsoAs: 'sriov' }, asPlugin(self))).toBe(ExitCode.ok);
    expect(readdirSync(bin).sort()).toEqual([INSTALL_LOCK_FILE, 'sriov', 'sriovctl-cni']);
    const [plugin, alias] = [statSync(join(bin, 'sriovctl-cni')), statSync(join(bin, 'sriov'))];
    expect(readFileSync(join(bin, 'sriovctl-cni')).equals(readFileSync(self))).toBe(true);
    expect(plugin.mode & 0o7777).toBe(0o755);
    expect([alias.dev, alias.ino]).toEqual([plugin.dev, plugin.ino]);
    expect(printed).toBe(`installed ${bin}/sriovctl-cni\ninstalled ${bin}/sriov\n`);
    printed = '';
    expect(await installCni(io, { to: bin, alsoAs: 'sriov' }, asPlugin(self))).toBe(ExitCode.ok);
    expect(printed).toBe(`${bin}/sriovctl-cni is up to date\n${bin}/sriov is up to date\n`);
    expect(statSync(join(bin, 'sriov')).ino).toBe(plugin.ino);
  });

  it('a new version replaces both names: the alias follows the new sriovctl-cni, whatever held the name before', async () => {
    writeFileSync(join(bin, 'sriov'), 'sriov-cni, the other plugin', { mode: 0o755 });
    expect(await installCni(io, { to: bin, alsoAs: 'sriov' }, asPlugin(self))).toBe(ExitCode.ok);
    const newer = join(dir, 'sriovctl-newer');
    copyFileSync('/bin/false', newer);
    expect(await installCni(io, { to: bin, alsoAs: 'sriov' }, asPlugin(newer))).toBe(ExitCode.ok);
    const [plugin, alias] = [statSync(join(bin, 'sriovctl-cni')), statSync(join(bin, 'sriov'))];
    expect(readFileSync(join(bin, 'sriov')).equals(readFileSync(newer))).toBe(true);
    expect([alias.dev, alias.ino]).toEqual([plugin.dev, plugin.ino]);
    expect(readdirSync(bin).sort()).toEqual([INSTALL_LOCK_FILE, 'sriov', 'sriovctl-cni']);
  });

  const refused: [string, RegExp][] = [
    ['sriovctl', /is a name the executable already answers to/],
    ['sriovctl-cni', /is a name the executable already answers to/],
    ['sriovctl-sysfs-write', /is a name the executable already answers to/],
    ['../sriov', /is not a plugin name/],
    ['', /is not a plugin name/],
    ['-sriov', /is not a plugin name/],
  ];
  it('refuses a --lock-timeout that is not a number of seconds (usage error) and writes nothing', async () => {
    for (const value of ['', 'soon', '-1', '1e3', '1000000']) {
      const err = await installCni(io, { to: bin, lockTimeout: value }, asPlugin(self)).catch((e: unknown) => e);
      expect([value, (err as CliError).exitCode, (err as CliError).message]).toEqual([value, ExitCode.usage, `--lock-timeout: ${JSON.stringify(value)} is not a number of seconds (0-999999)`]);
    }
    expect(readdirSync(bin)).toEqual([]);
  });

  for (const [name, why] of refused) {
    it(`refuses --also-as ${JSON.stringify(name)} (usage error) and writes nothing`, async () => {
      const err = await installCni(io, { to: bin, alsoAs: name }, asPlugin(self)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(ExitCode.usage);
      expect((err as CliError).message).toMatch(why);
      expect(readdirSync(bin)).toEqual([]);
    });
  }

  it('--then-wait installs first, then returns only when the pod is stopped (SIGTERM)', async () => {
    let done = false;
    const listeners = process.listenerCount('SIGTERM');
    const waiting = installCni(io, { to: bin, thenWait: true }, asPlugin(self)).then((code) => ((done = true), code));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(readdirSync(bin).sort()).toEqual([INSTALL_LOCK_FILE, 'sriovctl-cni']);
    expect(done).toBe(false);
    process.emit('SIGTERM', 'SIGTERM');
    expect(await waiting).toBe(ExitCode.ok);
    expect(process.listenerCount('SIGTERM')).toBe(listeners);
  });

  it('a real process waiting stays alive on its own and ends at SIGTERM with status 0', async () => {
    // the built module, in a process of its own: nothing but the wait keeps its event loop alive
    const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(join(DIST, 'cli', 'install-cni.js'))}).untilStopped().then((s) => console.log('stopped by', s)); console.log('waiting')`]);
    let out = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await new Promise<void>((r) => child.stdout.on('data', (b: Buffer) => ((out += b.toString()), out.includes('waiting') && r())));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toBe('waiting\nstopped by SIGTERM\n');
  });

  it('untilStopped resolves with the signal that came (SIGINT too)', async () => {
    const stopped = untilStopped();
    process.emit('SIGINT', 'SIGINT');
    expect(await stopped).toBe('SIGINT');
  });
});
