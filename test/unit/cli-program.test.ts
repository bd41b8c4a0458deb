// The command line as a contract: commander's own errors and our argument checks are exit 2, help/version 0,
// and nothing reaches the engine when an argument is bad (these cases never touch the kernel or the ledger).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import { ExitCode } from '../../src/cli/exit-codes';

class Capture {
  text = '';
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

async function run(...args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(['node', 'sriovctl', ...args], { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('sriovctl command line', () => {
  let stateDir: string;
  const saved = { ...process.env };

  beforeEach(() => {
    // any accidental ledger access lands here, and the test checks it stayed empty
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-cli-unit-'));
    process.env.SRIOVCTL_STATE_DIR = stateDir;
  });
  afterEach(() => {
    expect(fs.readdirSync(stateDir).filter((f) => f !== 'records' && f !== 'locks')).toEqual([]);
    process.env = { ...saved };
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('help and version exit 0', async () => {
    const help = await run('--help');
    expect(help.code).toBe(ExitCode.ok);
    for (const cmd of ['attach', 'detach', 'status', 'vfs', 'cleanup']) expect(help.stdout).toContain(cmd);
    expect((await run('--version')).code).toBe(ExitCode.ok);
    expect((await run('attach', '--help')).stdout).toContain('--vfs <n>');
  });

  it.each([
    [[], 'no command'],
    [['frobnicate'], 'unknown command'],
    [['status', '--bogus'], 'unknown option'],
    [['attach'], 'missing arguments'],
    [['attach', 'eth9'], 'missing target'],
    [['attach', 'eth9', 'ns1', 'extra'], 'too many arguments'],
    [['attach', 'eth9', 'ns1', '--vfs', 'many'], 'a bad count'],
    [['attach', 'eth9', 'ns1', '--vfs', '-1'], 'a negative count'],
    [['attach', 'eth9', 'ns1', '--driver', 'vfio-pci'], '--driver without --vfs'],
    [['attach', 'a-name-longer-than-15', 'ns1'], 'a bad interface name'],
    [['attach', 'eth9', 'ns1', '--as', 'bad/name'], 'a bad --as name'],
    [['attach', 'eth9', 'pid:abc'], 'a bad pid'],
    [['attach', 'eth9', 'docker:-x'], 'a container name that is an option'],
    [['-v', '-q', 'status'], '-v with -q'],
    [['detach'], 'detach without a NIC or --all'],
    [['detach', 'eth9', '--all'], 'detach with both'],
    [['detach', 'eth9', '--target', 'ns1'], '--target without --all'],
    [['vfs'], 'vfs without a PF'],
    [['vfs', 'eth9', 'x'], 'vfs with a bad count'],
    [['vfs', 'eth9', '--driver', 'vfio-pci'], 'vfs --driver without a count'],
    [['vfs', 'eth9', '4', '--timeout', '0'], 'a zero timeout'],
    [['cleanup', 'extra'], 'cleanup with an argument'],
  ])('%j (%s) is a usage error: exit 2, one message', async (args) => {
    const r = await run(...(args as string[]));
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^(error|sriovctl|Usage): /);
    expect(r.stdout).toBe('');
  });

  it('a usage error from our own checks names the bad value', async () => {
    expect((await run('attach', 'eth9', 'pid:abc')).stderr).toBe('sriovctl: attach eth9 to pid:abc: target pid:abc: not a pid ("abc")\n');
    expect((await run('attach', 'eth9', 'ns1', '--as', 'bad/name')).stderr).toMatch(/^sriovctl: attach eth9 to ns1: --as "bad\/name": /);
  });

  it('status reads the ledger without creating it', async () => {
    const fresh = path.join(stateDir, 'never-used');
    const r = await run('--state-dir', fresh, 'status');
    // and a line on the daemon when one is expected here (this machine's business)
    expect(r).toEqual({ code: ExitCode.ok, stdout: expect.stringMatching(/^no NIC is lent\n(daemon: [^\n]+\n)?$/), stderr: '' });
    expect((await run('--state-dir', fresh, 'status', '--json')).stdout).toBe('[]\n');
    expect(fs.existsSync(fresh)).toBe(false);
  });

  it('--state-dir and --sysfs-root reach the engine without being written to the environment', async () => {
    const other = path.join(stateDir, 'other');
    const before = { ...process.env };
    // the sysfs root reaches the sysfs model: a PF looked up under it is looked up there
    const r = await run('--state-dir', other, '--sysfs-root', 'rel/sys', 'vfs', '0000:03:00.0');
    expect(r.code).toBe(ExitCode.failed);
    expect(r.stderr).toContain(path.resolve('rel/sys', 'bus'));
    // the state dir reaches the ledger: status reads the one named, not the environment's
    fs.mkdirSync(path.join(other, 'records'), { recursive: true });
    fs.writeFileSync(path.join(other, 'records', 'pci-0000_03_00_0.json'), '{');
    expect((await run('--state-dir', other, 'status')).stderr).toContain(path.join(other, 'records'));
    expect(process.env).toEqual(before);
    fs.rmSync(other, { recursive: true, force: true });
  });
});
