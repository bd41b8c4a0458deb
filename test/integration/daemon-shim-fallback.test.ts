// Which one-shot plugin the shim runs when no daemon takes the call, in the order a node may hold one: the payload
// dir's launcher (<dir>/sriovctl.d/oneshot), the packaged executable beside it (run as sriovctl-cni), a checkout's
// node + bin/sriovctl-cni.js. Stand-ins are copies of bash: run with no arguments it reads its commands from stdin,
// so what it prints proves the exec'd file, the argv[0] it got, and that stdin and the environment arrived intact.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLUGIN, SHIM } from '../helpers/cni-run';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-shim-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const noDaemon = () => join(dir, 'no-daemon.sock');

function installShim(): string {
  const shim = join(dir, 'sriovctl-cni');
  copyFileSync(SHIM, shim);
  return shim;
}

function standIn(path: string): void {
  mkdirSync(resolve(path, '..'), { recursive: true });
  copyFileSync('/bin/bash', path);
}

const SCRIPT = 'echo "exe=$(readlink /proc/$$/exe) argv0=$0 cmd=$CNI_COMMAND"';

function run(shim: string, args: string[] = [], input = SCRIPT) {
  return spawnSync(shim, args, { env: { PATH: '/usr/bin:/bin', CNI_COMMAND: 'DEL', SRIOVCTL_SOCKET: noDaemon() }, input, encoding: 'utf8', timeout: 30_000 });
}

describe('the shim\'s one-shot plugin', () => {
  it('in a checkout: node with bin/sriovctl-cni.js', () => {
    const r = spawnSync(SHIM, ['--print-fallback'], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split(' ').map((p) => resolve(p))).toEqual([resolve(process.execPath), resolve(PLUGIN)]);
  });

  it('none at all: CNI error 109 naming where it looked, not a hang', () => {
    const shim = installShim();
    expect(run(shim, ['--print-fallback']).status).toBe(1);
    const r = run(shim);
    expect(r.status).toBe(1);
    const err = JSON.parse(r.stdout);
    expect(err).toMatchObject({ cniVersion: '1.1.0', code: 109 });
    expect(err.msg).toContain(`no daemon (${noDaemon()}: No such file or directory) and no one-shot plugin beside ${dir}`);
  });

  it('the packaged executable beside it, run as sriovctl-cni with the call\'s stdin and environment', () => {
    const shim = installShim();
    standIn(join(dir, 'sriovctl'));
    expect(run(shim, ['--print-fallback']).stdout).toBe(`${join(dir, 'sriovctl')}\n`);
    const r = run(shim);
    expect(r.stdout).toBe(`exe=${join(dir, 'sriovctl')} argv0=sriovctl-cni cmd=DEL\n`);
  });

  it('the payload dir\'s launcher first (sriovctl.d/oneshot)', () => {
    const shim = installShim();
    standIn(join(dir, 'sriovctl'));
    standIn(join(dir, 'sriovctl.d', 'oneshot'));
    expect(run(shim, ['--print-fallback']).stdout).toBe(`${join(dir, 'sriovctl.d', 'oneshot')}\n`);
    expect(run(shim).stdout).toBe(`exe=${join(dir, 'sriovctl.d', 'oneshot')} argv0=sriovctl-cni cmd=DEL\n`);
  });

  it('in a checkout, node is looked up in the absolute PATH entries alone: an empty or relative entry is not the current directory', () => {
    // a checkout's layout (<root>/build/Release/sriovctl-cni beside <root>/bin/sriovctl-cni.js) and a planted ./node
    const root = join(dir, 'checkout');
    mkdirSync(join(root, 'build', 'Release'), { recursive: true });
    mkdirSync(join(root, 'bin'));
    copyFileSync(SHIM, join(root, 'build', 'Release', 'sriovctl-cni'));
    copyFileSync(PLUGIN, join(root, 'bin', 'sriovctl-cni.js'));
    const cwd = join(dir, 'cwd');
    standIn(join(cwd, 'node'));
    standIn(join(cwd, 'rel', 'node'));
    for (const path of [':/nonexistent', '/nonexistent:', 'rel:/nonexistent', '/nonexistent::/nonexistent2']) {
      const env = { PATH: path, CNI_COMMAND: 'DEL', SRIOVCTL_SOCKET: noDaemon() };
      const shim = join(root, 'build', 'Release', 'sriovctl-cni');
      expect(spawnSync(shim, ['--print-fallback'], { env, cwd, encoding: 'utf8' }).status, path).toBe(1);
      const r = spawnSync(shim, [], { env, cwd, input: SCRIPT, encoding: 'utf8', timeout: 30_000 });
      expect(r.stdout, path).not.toContain('exe=');
      expect(JSON.parse(r.stdout)).toMatchObject({ code: 109 });
    }
  });
});
