// The one-shot plugin starts without the caller's NODE_* variables, whichever way it is reached: the static launcher
// (native/launcher/oneshot.c) and the shim's fallback exec (native/shim/sriovctl_cni.cc) remove them from the
// environment they exec with, and bin/sriovctl-cni.js run as a file starts node without them. Node reads them
// before any line of ours, so the payload stands in as a real node: NODE_OPTIONS=--require=<marker> would write a
// marker file, NODE_EXTRA_CA_CERTS naming a missing file would make node warn on stderr, and the payload prints the
// names of the variables it was given.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without types
import { buildLauncher } from '../../scripts/package/launcher.mjs';
import { PLUGIN, requireBundle, SHIM } from '../helpers/cni-run';

let dir: string;
let marker: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-node-env-'));
  marker = join(dir, 'preloaded');
  writeFileSync(join(dir, 'preload.cjs'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The caller's environment: what the plugin needs, and the NODE_* variables it must not start with. A command the
 * launcher passes on (it answers VERSION itself: oneshot-static-answers.test.ts).
 */
function callerEnv(command = 'VERSION'): NodeJS.ProcessEnv {
  return {
    PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`,
    CNI_COMMAND: command,
    SRIOVCTL_SOCKET: join(dir, 'no-daemon.sock'),
    NODE_OPTIONS: `--require=${join(dir, 'preload.cjs')}`,
    NODE_EXTRA_CA_CERTS: join(dir, 'no-such-bundle.pem'),
    NODE_PATH: dir,
  };
}

/** A payload that is node reading its program from stdin: it prints the names of its variables. */
const PRINT_ENV_NAMES = 'process.stdout.write(JSON.stringify(Object.keys(process.env).sort()))';

function expectNoNodeStart(r: ReturnType<typeof spawnSync>): void {
  expect(existsSync(marker), 'NODE_OPTIONS --require ran in the plugin').toBe(false);
  expect(String(r.stderr)).not.toContain('extra certs');
}

describe('the one-shot plugin starts without the caller\'s NODE_* variables', () => {
  it('through the static launcher: the payload\'s executable gets every variable but NODE_*', () => {
    const payload = join(dir, 'sriovctl.d');
    mkdirSync(join(payload, 'lib'), { recursive: true });
    buildLauncher('amd64', join(payload, 'oneshot'));
    // this machine's loader and node stand in for the payload's private glibc and the packaged executable
    copyFileSync(realpathSync('/lib64/ld-linux-x86-64.so.2'), join(payload, 'lib', 'ld-linux-x86-64.so.2'));
    symlinkSync(process.execPath, join(payload, 'sriovctl'));
    const r = spawnSync(join(payload, 'oneshot'), [], { env: callerEnv('ADD'), input: PRINT_ENV_NAMES, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expectNoNodeStart(r);
    expect(JSON.parse(r.stdout)).toEqual(['CNI_COMMAND', 'PATH', 'SRIOVCTL_SOCKET']);
  });

  it('through the shim\'s fallback to the packaged executable beside it', () => {
    const shim = join(dir, 'sriovctl-cni');
    copyFileSync(SHIM, shim);
    symlinkSync(process.execPath, join(dir, 'sriovctl'));
    const r = spawnSync(shim, [], { env: callerEnv(), input: PRINT_ENV_NAMES, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expectNoNodeStart(r);
    expect(JSON.parse(r.stdout)).toEqual(['CNI_COMMAND', 'PATH', 'SRIOVCTL_SOCKET']);
  });

  it.each([
    ['through the shim\'s fallback to a checkout\'s node + bin/sriovctl-cni.js', SHIM],
    ['bin/sriovctl-cni.js run as a file', PLUGIN],
  ])('%s: the real plugin answers VERSION', (_how, program) => {
    requireBundle();
    const r = spawnSync(program, [], { env: callerEnv(), input: '{"cniVersion":"1.0.0"}', encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).supportedVersions).toContain('1.0.0');
    expectNoNodeStart(r);
  });

  it('(the stand-ins would show it: node itself, given the same environment, runs the preload and warns)', () => {
    const r = spawnSync(process.execPath, ['-e', '0'], { env: callerEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(r.stderr).toContain('extra certs');
  });
});
