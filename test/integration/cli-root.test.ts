// Without root, every command that needs it says so in one line and exits 4, before it looks at anything (no
// EACCES from the state dir, no half-done work); help, --version and the like still answer. Run as `nobody` on a
// state dir that is root's alone, as /var/lib/sriovctl is.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, sriovctl, type CliEnv } from '../helpers/cli-process';

const AS_NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'];
const NOT_ROOT = 'sriovctl must be run as root (it moves network interfaces)\n';

describe('sriovctl run without root', () => {
  let env: CliEnv;

  beforeAll(() => {
    assertBuilt();
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-cli-root-'));
    fs.mkdirSync(path.join(stateDir, 'records'), { mode: 0o700 });
    env = { stateDir, sysfsRoot: '/sys', launcher: AS_NOBODY };
  });
  afterAll(() => {
    // nothing was written: the state dir is as it was made
    expect(fs.readdirSync(env.stateDir)).toEqual(['records']);
    fs.rmSync(env.stateDir, { recursive: true, force: true });
  });

  it.each([
    'status',
    'status --json',
    'nics',
    'nics --json',
    'attach eth9 ns1',
    'detach --all',
    'detach eth9',
    'vfs eth9',
    'vfs eth9 4',
    'cleanup',
    'cleanup --dry-run',
    'install-cni --to /tmp/sriovctl-cli-root-nowhere',
    'daemon',
    'cluster up',
    'cluster down --name x',
    'cluster status --name x',
    'cluster list',
    'demo',
  ])('sriovctl %s: exit 4, one line on stderr, nothing on stdout', async (command) => {
    const r = await sriovctl(env, command.split(' '));
    expect(r).toEqual({ code: 4, stdout: '', stderr: NOT_ROOT });
  });

  it.each(['--help', '--version', 'help', 'help status', 'attach --help', 'cluster down --help', 'completion bash'])('sriovctl %s answers without root', async (command) => {
    const r = await sriovctl(env, command.split(' '));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toBe('');
  });

  it('a bad command line is still a usage error first (exit 2)', async () => {
    const r = await sriovctl(env, ['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe("error: unknown command 'frobnicate'");
  });
});
