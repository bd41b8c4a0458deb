// The static launcher (native/launcher/oneshot.c) answers CNI VERSION and a run by hand itself, without starting
// the payload's executable (Node: ~40 ms a start), and answers as the Node plugin (bin/sriovctl-cni.js) does —
// stdout, stderr and exit status — whatever stdin holds: a config, one without cniVersion, garbage, a version
// neither speaks, nothing. Its payload's executable here is a stand-in that would answer otherwise if it ran.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without types
import { buildLauncher } from '../../scripts/package/launcher.mjs';
import { PLUGIN, requireBundle } from '../helpers/cni-run';

let dir: string;
let launcher: string;
beforeAll(() => {
  requireBundle();
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-static-answers-'));
  const payload = join(dir, 'sriovctl.d');
  mkdirSync(join(payload, 'lib'), { recursive: true });
  launcher = join(payload, 'oneshot');
  buildLauncher('amd64', launcher);
  copyFileSync(realpathSync('/lib64/ld-linux-x86-64.so.2'), join(payload, 'lib', 'ld-linux-x86-64.so.2'));
  // run, it would say so (the loader refuses a script: any answer but the plugin's)
  writeFileSync(join(payload, 'sriovctl'), '#!/bin/sh\necho "the payload ran"\nexit 99\n');
  chmodSync(join(payload, 'sriovctl'), 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STDINS: Record<string, string> = {
  'a config': '{"cniVersion":"1.0.0","name":"n","type":"sriovctl-cni"}',
  'a config without cniVersion': '{"name":"n","type":"sriovctl-cni"}',
  garbage: 'not json {',
  'a version neither speaks': '{"cniVersion":"9.9.9"}',
  nothing: '',
};

function run(program: string, args: string[], env: NodeJS.ProcessEnv, input: string) {
  const r = spawnSync(program, args, { env: { PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`, ...env }, input, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the launcher answers as the plugin', () => {
  it.each(Object.keys(STDINS))('CNI VERSION with %s on stdin', (what) => {
    const env = { CNI_COMMAND: 'VERSION' };
    const ours = run(launcher, [], env, STDINS[what]);
    expect(ours).toEqual(run(PLUGIN, [], env, STDINS[what]));
    expect(ours.status).toBe(0);
    expect(JSON.parse(ours.stdout).supportedVersions).toContain('1.1.0');
  });

  it.each([
    ['--version', ['--version'], {}],
    ['--help', ['--help'], {}],
    ['bare', [], {}],
    ['with CNI_COMMAND empty', [], { CNI_COMMAND: '' }],
  ])('run by hand: %s', (_what, args, env) => {
    const ours = run(launcher, args, env, '');
    expect(ours).toEqual(run(PLUGIN, args, env, ''));
    expect(ours.stderr).toMatch(/^CNI sriovctl-cni plugin version .+\nCNI protocol versions supported: 0\.1\.0, /);
  });

  it('any other command runs the payload (the stand-in here)', () => {
    const r = run(launcher, [], { CNI_COMMAND: 'ADD' }, STDINS['a config']);
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain('supportedVersions');
  });
});
