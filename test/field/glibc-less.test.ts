// The plugin on a node without glibc (k3s/k3d's busybox-based node image): the real installer (the packaged
// executable's install-cni) into a busybox-only root file system, then the installed /opt/cni/bin/sriovctl-cni run
// inside it — VERSION, and a real ADD/DEL lending a veth NIC to a network namespace and giving it back — amd64
// natively, arm64 under qemu-user. The plain executable cannot even start there: that is what the payload fixes.
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scratch } from '../helpers/kernel';
import { nicState, standInNic } from '../helpers/lend-fixture';
import { busyboxRootfs, type BusyboxRootfs } from './busybox-rootfs';
import { expectInstalledPlugin } from './installed-plugin';
import { executable } from './packaged';
import { runPackaged, type Arch } from './run-packaged';

/** The environment a kubelet/containerd on that node gives the plugin (PATH: busybox's). */
const NODE_ENV = { PATH: '/bin', CNI_PATH: '/opt/cni/bin' };

describe.each(['amd64', 'arm64'] as Arch[])('the plugin on a node without glibc (%s)', (arch) => {
  let fs: BusyboxRootfs;
  const inNode = (argv: string[], env: Record<string, string>, stdin = '') => fs.run(argv, { arch, env: { ...NODE_ENV, ...env }, stdin });

  beforeEach(async () => {
    fs = busyboxRootfs(`busybox-${arch}`);
    // no glibc anywhere in it: nothing but static busybox (no ELF interpreter requested)
    expect(readdirSync(fs.root, { recursive: true }).map(String).filter((f) => /(^|\/)(ld-linux|libc\.so)/.test(f))).toEqual([]);
    expect(execFileSync('readelf', ['-l', join(fs.root, 'bin', 'busybox')], { encoding: 'utf8' })).not.toMatch(/program interpreter/);
    const r = await runPackaged(['install-cni', '--to', fs.binDir], { arch, name: 'sriovctl', env: { SRIOVCTL_CACHE_DIR: join(fs.root, '..', 'cache') } });
    expect(r).toEqual({ code: 0, stdout: `installed ${fs.binDir}/sriovctl-cni\n`, stderr: '' });
    expectInstalledPlugin(fs.binDir, arch);
  });
  afterEach(() => fs.remove());

  it('the plain executable cannot start there: its glibc loader is missing', async () => {
    copyFileSync(executable(arch), join(fs.binDir, 'plain'));
    const r = await inNode(['/bin/sh', '-c', '/opt/cni/bin/plain --version'], {});
    // the kernel's ENOENT for the missing interpreter, as busybox's sh reports it; qemu-user names the loader
    const [code, message] = arch === 'amd64' ? [127, /^\/bin\/sh: \/opt\/cni\/bin\/plain: not found$/m] : [255, /Could not open '\/lib\/ld-linux-aarch64\.so\.1': No such file or directory/];
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
  });

  it('the installed sriovctl-cni answers CNI VERSION there', async () => {
    const r = await inNode(['/opt/cni/bin/sriovctl-cni'], { CNI_COMMAND: 'VERSION' }, '{"cniVersion":"1.1.0"}');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).supportedVersions).toContain('1.1.0');
  });
});

describe('the plugin on a node without glibc (amd64): a real ADD and DEL', () => {
  let fs: BusyboxRootfs;
  let s: Scratch;

  beforeEach(async () => {
    fs = busyboxRootfs('busybox-add');
    s = new Scratch();
    const r = await runPackaged(['install-cni', '--to', fs.binDir], { name: 'sriovctl', env: { SRIOVCTL_CACHE_DIR: join(fs.root, '..', 'cache') } });
    expect(r.code).toBe(0);
  });
  afterEach(() => {
    s.cleanup();
    fs.remove();
  });

  it('lends a veth NIC to a pod namespace as eth0 and gives it back as it was, its ledger in the node\'s /var/lib', async () => {
    const nic = standInNic(s, 'n0');
    const pod = s.netns('pod');
    const config = JSON.stringify({ cniVersion: '1.0.0', name: `busybox-${s.prefix}`, type: 'sriovctl-cni', device: nic.name });
    // stand-in NICs have no PCI device: an empty sysfs tree inside the node
    const env = { CNI_CONTAINERID: `busybox-${s.prefix}`, CNI_NETNS: `/var/run/netns/${pod}`, CNI_IFNAME: 'eth0', SRIOVCTL_SYSFS_ROOT: '/tmp' };

    const add = await fs.run(['/opt/cni/bin/sriovctl-cni'], { env: { ...NODE_ENV, ...env, CNI_COMMAND: 'ADD' }, stdin: config });
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout).interfaces).toEqual([expect.objectContaining({ name: 'eth0', mac: nic.mac, sandbox: `/var/run/netns/${pod}` })]);
    expect(nicState(nic.name)).toBeNull();
    expect(nicState('eth0', pod)).toMatchObject({ mac: nic.mac });
    // the record is the node's (inside its root), written before the NIC moved
    expect(readdirSync(join(fs.root, 'var', 'lib', 'sriovctl', 'records')).filter((f) => f.endsWith('.json'))).toHaveLength(1);

    const del = await fs.run(['/opt/cni/bin/sriovctl-cni'], { env: { ...NODE_ENV, ...env, CNI_COMMAND: 'DEL' }, stdin: config });
    expect([del.code, del.stdout]).toEqual([0, '']);
    expect(nicState('eth0', pod)).toBeNull();
    expect(nicState(nic.name)).toEqual(nic);
    expect(existsSync(join(fs.root, 'var', 'lib', 'sriovctl', 'records')) ? readdirSync(join(fs.root, 'var', 'lib', 'sriovctl', 'records')).filter((f) => f.endsWith('.json')) : []).toEqual([]);
  });
});
