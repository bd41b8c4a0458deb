// sriovctl-cni run by a person (no CNI_COMMAND: `--version`, `--help`, bare) answers as the Go plugins do: two
// lines on stderr naming the plugin, its version and the CNI versions it speaks, exit 0, nothing on stdout. A
// runtime's call (CNI_COMMAND set) with variables missing still gets the CNI error; VERSION's JSON is unchanged.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEBIAN_CNI, PLUGIN, requireBundle, SHIM } from '../helpers/cni-run';
import { packageVersion } from '../../src/package/version';
import { SUPPORTED_VERSIONS } from '../../src/cni/versions';

const ABOUT = `CNI sriovctl-cni plugin version ${packageVersion()}\nCNI protocol versions supported: ${SUPPORTED_VERSIONS.join(', ')}\n`;

let stateDir: string;

function run(plugin: string[], args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(plugin[0], [...plugin.slice(1), ...args], {
    // a clean environment, as `env -i` gives; the shim talks to the suite's daemon in the cni-shim project, and runs
    // the one-shot plugin when there is none
    env: { PATH: process.env.PATH!, SRIOVCTL_STATE_DIR: stateDir, SRIOVCTL_SOCKET: process.env.SRIOVCTL_SOCKET ?? join(stateDir, 'no.sock'), ...env },
    input: '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const PLUGINS: [string, () => string[]][] = [
  ['the one-shot plugin', () => [process.execPath, PLUGIN]],
  ['the shim', () => [SHIM]],
];

beforeAll(() => {
  requireBundle();
  stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-cni-about-'));
});
afterAll(() => {
  // a person's call is no CNI call: nothing was recorded
  expect(existsSync(join(stateDir, 'records')) ? readdirSync(join(stateDir, 'records')) : []).toEqual([]);
  rmSync(stateDir, { recursive: true, force: true });
});

describe.each(PLUGINS)('%s run by hand', (_name, plugin) => {
  it.each([[[]], [['--version']], [['--help']]])('%j: the two lines on stderr, exit 0', (args) => {
    expect(run(plugin(), args as string[])).toEqual({ code: 0, stdout: '', stderr: ABOUT });
  });

  it('a full CNI environment without CNI_COMMAND is still a person (as in the Go skel)', () => {
    const env = { CNI_CONTAINERID: 'c1', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'net1', CNI_PATH: DEBIAN_CNI, CNI_COMMAND: '' };
    expect(run(plugin(), [], env)).toEqual({ code: 0, stdout: '', stderr: ABOUT });
  });

  it('a runtime call with variables missing gets the CNI error, --version or not', () => {
    const r = run(plugin(), ['--version'], { CNI_COMMAND: 'ADD' });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 4, msg: 'required env variables [CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME,CNI_PATH] missing' });
  });

  it("VERSION's answer is the JSON it always was", () => {
    const r = run(plugin(), [], { CNI_COMMAND: 'VERSION' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ cniVersion: '1.1.0', supportedVersions: [...SUPPORTED_VERSIONS] });
  });
});

it("has the shape of Debian's host-device answer", () => {
  const theirs = run([join(DEBIAN_CNI, 'host-device')], ['--version']);
  expect(theirs.code).toBe(0);
  expect(theirs.stdout).toBe('');
  const shape = (s: string, name: string) => s.replace(`CNI ${name} plugin `, 'CNI <name> plugin ').replace(/plugin .*\n/, 'plugin <version>\n').replace(/supported: .*\n/, 'supported: <list>\n');
  expect(shape(ABOUT, 'sriovctl-cni')).toBe(shape(theirs.stderr, 'host-device'));
});
