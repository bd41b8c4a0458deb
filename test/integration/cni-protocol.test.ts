// The executable's protocol surface: VERSION (without the native addon), the error object, logging.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { BUNDLE, RUN_BUNDLE, expectErrorShape, PLUGIN, runCni, type CniRoots } from '../helpers/cni-run';
import { Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { spawnSync } from 'node:child_process';
import { useCniWorld } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;
let dir: string;

useCniWorld((w) => ({ s, roots, dir } = w), { tempDir: 'cni-proto-' });

const VERSION_REPLY = { cniVersion: '1.1.0', supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] };

/** A namespace that is not the plugin's own (ADD refuses that one with code 8). */
const podNs = () => s.netns('pod');

describe('VERSION', () => {
  it('lists every version, with or without a config on stdin', () => {
    for (const config of ['{"cniVersion":"1.0.0"}', '']) {
      const a = runCni({ command: 'VERSION', config }, roots);
      expect(a.status).toBe(0);
      expect(a.stdout).toBe(JSON.stringify(VERSION_REPLY) + '\n');
      expect(a.stderr).toBe('');
    }
  });

  it('never loads the native addon: it answers from a copy with no build/ next to it', () => {
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'dist'));
    copyFileSync(PLUGIN, join(dir, 'bin', 'sriovctl-cni.js'));
    copyFileSync(BUNDLE, join(dir, 'dist', 'sriovctl-cni.bundle.js'));
    copyFileSync(RUN_BUNDLE, join(dir, 'dist', 'sriovctl-cni-run.bundle.js'));
    expect(existsSync(join(dir, 'build'))).toBe(false);
    const run = (command: string) =>
      spawnSync(process.execPath, [join(dir, 'bin', 'sriovctl-cni.js')], {
        env: { PATH: process.env.PATH, CNI_COMMAND: command, CNI_CONTAINERID: 'c', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'x', CNI_PATH: '/usr/lib/cni', SRIOVCTL_STATE_DIR: roots.stateDir },
        input: JSON.stringify({ cniVersion: '1.1.0', name: 'n', type: 'sriovctl-cni', device: 'nosuch0' }),
        encoding: 'utf8',
      });
    const version = run('VERSION');
    expect(version.status).toBe(0);
    expect(JSON.parse(version.stdout)).toEqual(VERSION_REPLY);
    // the same copy cannot ADD (it needs the addon), which is what makes the first half meaningful
    const add = run('ADD');
    expect(add.status).toBe(1);
    expect(JSON.parse(add.stdout).code).toBe(109);
  });

  it('a missing second bundle is still answered with one error object', () => {
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'dist'));
    copyFileSync(PLUGIN, join(dir, 'bin', 'sriovctl-cni.js'));
    copyFileSync(BUNDLE, join(dir, 'dist', 'sriovctl-cni.bundle.js'));
    const r = spawnSync(process.execPath, [join(dir, 'bin', 'sriovctl-cni.js')], {
      env: { PATH: process.env.PATH, CNI_COMMAND: 'DEL', SRIOVCTL_STATE_DIR: roots.stateDir },
      input: '{}',
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 109, msg: expect.stringContaining('cannot load the plugin') });
    expect(r.stderr).toBe('');
  });
});

describe('the code cache of the second bundle', () => {
  // the one-shot plugin's loader: a daemon loads its code once, without this cache
  const call = (command: string, env: Record<string, string> = {}) =>
    runCni({ command, containerId: 'c1', ifname: 'net1', config: { cniVersion: '1.1.0', name: 'n', type: 'sriovctl-cni' }, env, transport: 'oneshot' }, roots);
  const del = (env: Record<string, string> = {}) => call('DEL', env);
  const cacheDir = () => join(roots.stateDir, 'cni', 'code-cache');
  const caches = () => (existsSync(cacheDir()) ? readdirSync(cacheDir()) : []);

  it('is written by the first run and used, not trusted: a corrupt one is rejected and replaced', () => {
    expect(del().status).toBe(0);
    const [file] = caches();
    expect(file).toMatch(/^sriovctl-cni-run\.bundle\.js\.DEL-[0-9a-f]{32}\.v8cache$/);
    const first = statSync(join(cacheDir(), file));
    expect(first.mode & 0o777).toBe(0o600);
    expect(first.size).toBeGreaterThan(10_000);
    writeFileSync(join(cacheDir(), file), Buffer.alloc(first.size, 0x5a));
    const again = del();
    expect(again.status, again.stdout + again.stderr).toBe(0);
    expect(readFileSync(join(cacheDir(), file)).equals(Buffer.alloc(first.size, 0x5a))).toBe(false);
    expect(caches()).toEqual([file]);
  });

  it('is one per verb: each holds what its verb compiled, and none replaces another verb\'s', () => {
    expect(del().status).toBe(0);
    expect(call('CHECK').status).not.toBe(null);
    const names = caches().sort();
    expect(names).toEqual([expect.stringMatching(/^sriovctl-cni-run\.bundle\.js\.CHECK-[0-9a-f]{32}\.v8cache$/), expect.stringMatching(/^sriovctl-cni-run\.bundle\.js\.DEL-[0-9a-f]{32}\.v8cache$/)]);
    // the same key: the same bundle, Node and architecture
    expect(new Set(names.map((n) => n.slice(-40)))).toHaveLength(1);
  });

  it('SRIOVCTL_CNI_CODE_CACHE=off neither reads nor writes one', () => {
    expect(del({ SRIOVCTL_CNI_CODE_CACHE: 'off' }).status).toBe(0);
    expect(caches()).toEqual([]);
  });
});

describe('errors', () => {
  it('carry the config\'s cniVersion and exactly cniVersion, code, msg, details', () => {
    const a = runCni(
      { command: 'ADD', containerId: 'c1', netns: '/var/run/netns/' + podNs(), ifname: 'net1', config: { cniVersion: '0.4.0', name: 'n', type: 'sriovctl-cni', device: 'nosuchdev9' } },
      roots,
    );
    expect(expectErrorShape(a)).toEqual({ cniVersion: '0.4.0', code: 100, msg: 'device nosuchdev9 not found', details: '' });
  });

  it('an unsupported config version is answered in our newest, which the runtime can read (libcni does so too)', () => {
    const a = runCni({ command: 'DEL', containerId: 'c1', ifname: 'net1', config: { cniVersion: '0.5.0', name: 'n', type: 'x' } }, roots);
    expect(expectErrorShape(a)).toMatchObject({ cniVersion: '1.1.0', code: 1 });
  });

  it('stdin that is not JSON is answered in our newest version', () => {
    const a = runCni({ command: 'DEL', containerId: 'c1', ifname: 'net1', config: 'nope' }, roots);
    expect(expectErrorShape(a)).toMatchObject({ cniVersion: '1.1.0', code: 6 });
  });
});

describe('logging (sriov-cni\'s logLevel and logFile)', () => {
  let nic: NicState;
  let pod: string;
  beforeEach(() => {
    pod = s.netns('pod');
    nic = standInNic(s, 'l0');
  });
  // the test's scratch dir is the allowed log directory, as the runtime would set it (never this process's env)
  const call = (command: string, extra: object) =>
    runCni(
      {
        command,
        containerId: 'c1',
        netns: `/var/run/netns/${pod}`,
        ifname: 'net1',
        config: { cniVersion: '1.1.0', name: 'n', type: 'sriovctl-cni', device: nic.name, ...extra },
        env: { SRIOVCTL_CNI_LOG_DIRS: dir },
      },
      roots,
    );

  it('logFile receives the log and stderr stays quiet', () => {
    const logFile = join(dir, 'cni.log');
    expect(call('ADD', { logFile, logLevel: 'debug' }).status).toBe(0);
    expect(call('DEL', { logFile, logLevel: 'debug' }).stderr).toBe('');
    const text = readFileSync(logFile, 'utf8');
    expect(text).toMatch(/info sriovctl-cni\[\d+\] \+\d+ms ADD c1\/net1: lent device /);
    expect(text).toMatch(/DEL c1\/net1: gave back /);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('without logFile the log goes to stderr; logLevel error keeps a success silent', () => {
    const add = call('ADD', {});
    expect(add.stderr).toContain('lent device');
    const del = call('DEL', { logLevel: 'error' });
    expect(del.status).toBe(0);
    expect(del.stderr).toBe('');
  });

  it('a failure is logged once, without a stack trace', () => {
    const logFile = join(dir, 'fail.log');
    const a = call('ADD', { logFile, device: 'nosuchdev8' });
    expect(a.status).toBe(1);
    const text = readFileSync(logFile, 'utf8');
    expect(text).toContain('error sriovctl-cni');
    expect(text).toContain('code 100: device nosuchdev8 not found');
    expect(text).not.toMatch(/\n\s+at /);
  });
});
