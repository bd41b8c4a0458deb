// The conventions of ip, kubectl and kind, through the real executable: `help` is a command that succeeds, a
// usage error points at the mistyped command's own help, counts have the right number, status shows ages (the
// timestamp stays in --json) and a daemon line only when a daemon is expected, and our internal error codes stay
// out of what a person reads.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { ip } from '../helpers/kernel';
import { DEFAULT_SOCKET } from '../../src/daemon/socket-path';

const PF = '0000:5e:00.0';

describe('sriovctl conventions', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  it('help and help <command> exit 0 with the help on stdout', async () => {
    const all = await w.run('help');
    expect([all.code, all.stderr, all.stdout.split('\n')[0]]).toEqual([0, '', 'Usage: sriovctl [options] [command]']);
    const one = await w.run('help', 'status');
    expect([one.code, one.stderr, one.stdout.split('\n')[0]]).toEqual([0, '', 'Usage: sriovctl status [options]']);
    const nested = await w.run('cluster', 'help', 'down');
    expect([nested.code, nested.stdout.split('\n')[0]]).toEqual([0, 'Usage: sriovctl cluster down [options]']);
    // help takes the path of a command, as kubectl's does
    const path = await w.run('help', 'cluster', 'down');
    expect([path.code, path.stderr, path.stdout.split('\n')[0]]).toEqual([0, '', 'Usage: sriovctl cluster down [options]']);
  });

  it.each([
    [['help', 'staus'], 'staus', 'status', 'sriovctl --help'],
    [['staus', '--help'], 'staus', 'status', 'sriovctl --help'],
    [['help', 'cluster', 'dwon'], 'dwon', 'down', 'sriovctl cluster --help'],
    [['cluster', 'dwon', '-h'], 'dwon', 'down', 'sriovctl cluster --help'],
  ])('%j: the help of a command that does not exist is a usage error naming it (exit 2), not a help', async (args, typed, meant, help) => {
    const r = await w.run(...args);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(`error: unknown command '${typed}'\n(Did you mean ${meant}?)\n(run ${help} for usage)\n`);
  });

  it.each([
    [['attach', 'eth9'], "error: missing required argument 'target'", 'sriovctl attach --help'],
    [['status', '--bogus'], "error: unknown option '--bogus'", 'sriovctl status --help'],
    [['cluster', 'down', '--bogus'], "error: unknown option '--bogus'", 'sriovctl cluster down --help'],
    [['frobnicate'], "error: unknown command 'frobnicate'", 'sriovctl --help'],
  ])('%j: exit 2, %s, then the hint', async (args, first, help) => {
    const r = await w.run(...args);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr.split('\n')[0]).toBe(first);
    expect(r.stderr.endsWith(`\n(run ${help} for usage)\n`)).toBe(true);
  });

  it('one VF is "1 VF"; status shows an age, --json the timestamp', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 1 } });
    const node = w.netns('node');
    const a = await w.run('attach', pf.name, node, '--vfs', '1');
    expect([a.code, a.stderr]).toEqual([0, '']);
    expect(a.stdout.split('\n')[1]).toBe(`${pf.name}: 1 VF`);

    const text = await w.run('status');
    const [header, row] = text.stdout.split('\n');
    expect(header).toMatch(/^NIC +OWNER +PHASE +NOW +AGE$/);
    expect(row).toMatch(new RegExp(`^${pf.name} \\(${PF}\\) +attach:${node} +lent +.* (\\d+s|\\d+m(\\d+s)?)$`));
    const [entry] = JSON.parse((await w.run('status', '--json')).stdout);
    expect(entry.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const shown = await w.run('vfs', pf.name);
    expect(shown.stdout.split('\n')[0]).toMatch(new RegExp(`^${pf.name} \\(${PF}\\): 1 of 1 VF; lent to /var/run/netns/${node} as ${pf.name} by attach:${node} for \\d+s$`));
    expect((await w.run('detach', pf.name)).code).toBe(0);
  });

  it('status: a daemon line only when a daemon is expected (SRIOVCTL_SOCKET set, or its socket there)', async () => {
    const socket = path.join(w.env.stateDir, 'no-daemon.sock');
    const expected = await w.runWith({ SRIOVCTL_SOCKET: socket }, 'status');
    expect(expected).toEqual({ code: 0, stdout: `no NIC is lent\ndaemon: none (no daemon at ${socket} (ENOENT))\n`, stderr: '' });
    const plain = await w.runWith({ SRIOVCTL_SOCKET: undefined }, 'status');
    // this machine's own daemon socket decides whether one is expected by default
    expect(plain.stdout).toMatch(fs.existsSync(DEFAULT_SOCKET) ? /^no NIC is lent\ndaemon: [^\n]+\n$/ : /^no NIC is lent\n$/);
    expect([plain.code, plain.stderr]).toEqual([0, '']);
  });

  it('a device that is not a PF is named as it was typed', async () => {
    const nic = w.plainNic('np');
    w.sysfs.sim.addPciDevice({ bdf: '0000:00:09.0', driver: 'virtio-pci', netdev: { name: nic.name, mac: nic.mac } });
    const r = await w.run('vfs', nic.name);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe(`sriovctl: vfs ${nic.name}: ${nic.name} (0000:00:09.0) is not an SR-IOV PF (no sriov_totalvfs)\n`);
  });

  it("a kernel refusal says the kernel's own sentence without -v; -v adds the operation", async () => {
    // a bridge's namespace is immutable: the kernel refuses the move with EINVAL, and only its extended ack says why
    const bridge = w.s.name('br');
    ip('link', 'add', bridge, 'type', 'bridge');
    w.s.onCleanup(() => ip('link', 'del', bridge));
    const node = w.netns('node');
    const plain = await w.run('attach', bridge, node);
    expect([plain.code, plain.stdout]).toEqual([1, '']);
    expect(plain.stderr).toBe(`sriovctl: attach ${bridge} to ${node}: Invalid argument (EINVAL): The interface netns is immutable\n`);
    const verbose = await w.run('attach', bridge, node, '-v');
    expect(verbose.stderr.split('\n').at(-2)).toMatch(new RegExp(`^sriovctl: attach ${bridge} to ${node}: RTM_NEWLINK [^:]+: Invalid argument \\(EINVAL\\): The interface netns is immutable$`));
    // refused by the kernel before anything moved: no record left behind
    const status = await w.run('status', '--json');
    expect([status.code, JSON.parse(status.stdout)]).toEqual([0, []]);
  });

  it('no internal error codes in what a person reads (they are the kernel codes only)', async () => {
    const r = await w.run('vfs', '0000:7f:00.0');
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe(`sriovctl: vfs 0000:7f:00.0: no device 0000:7f:00.0 under ${path.join(w.env.sysfsRoot, 'bus')}\n`);
  });
});
