// A state directory or a target that cannot exist is a typo hiding a problem: an error (exit 1, one line naming
// it), never an empty answer with exit 0. One that merely does not exist yet (a fresh machine) stays an empty answer.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, sriovctl } from '../helpers/cli-process';

let tmp: string;

beforeAll(() => {
  assertBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-cli-typos-'));
  fs.writeFileSync(path.join(tmp, 'a-file'), '');
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function run(stateDir: string, command: string) {
  return sriovctl({ stateDir, sysfsRoot: '/sys' }, command.split(' '));
}

describe('a state directory that cannot exist', () => {
  it.each(['status', 'status --json', 'cleanup --dry-run'])('sriovctl %s on /proc/…: exit 1, naming why', async (command) => {
    const r = await run('/proc/sriovctl-typo/state', command);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`sriovctl: ${command.split(' ')[0]}: state directory /proc/sriovctl-typo/state cannot exist: /proc is on proc, where no directory can be made\n`);
  });

  it('below a regular file: exit 1, naming the file', async () => {
    const r = await run(path.join(tmp, 'a-file', 'state'), 'status');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`sriovctl: status: state directory ${path.join(tmp, 'a-file', 'state')} cannot exist: ${path.join(tmp, 'a-file')} is not a directory\n`);
  });

  it('one not made yet is a machine that never lent a NIC: nothing lent, exit 0, still not made', async () => {
    const fresh = path.join(tmp, 'not-yet', 'state');
    const r = await run(fresh, 'status --json');
    expect(r).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
    expect(fs.existsSync(path.join(tmp, 'not-yet'))).toBe(false);
  });
});

describe('detach --all --target', () => {
  it('a target that exists nowhere, never attached to: exit 1, naming it', async () => {
    const name = `nosuchns-${process.pid}`;
    const r = await run(path.join(tmp, 'state'), `detach --all --target ${name}`);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`sriovctl: detach --all --target ${name}: target ${name}: no such network namespace (/var/run/netns/${name})\n`);
  });
});
