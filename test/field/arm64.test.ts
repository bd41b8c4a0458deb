// The arm64 executable, run for real under Debian's qemu-user-static: its own Node runtime, its cross-compiled
// addon and a real netlink round trip (a NIC lent to a namespace and given back) — checked with iproute2.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linkJson, Scratch } from '../helpers/kernel';
import { PACKAGE_VERSION } from './packaged';
import { runPackaged, tempDir } from './run-packaged';


describe('the arm64 executable under qemu-user', () => {
  let tmp: ReturnType<typeof tempDir>;
  let s: Scratch;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    tmp = tempDir('arm64');
    s = new Scratch();
    const sysfs = join(tmp.dir, 'sys');
    mkdirSync(sysfs);
    env = { SRIOVCTL_CACHE_DIR: join(tmp.dir, 'cache'), SRIOVCTL_STATE_DIR: join(tmp.dir, 'state'), SRIOVCTL_SYSFS_ROOT: sysfs };
  });
  afterEach(() => {
    s.cleanup();
    tmp.remove();
  });

  it('prints its version, and answers CNI VERSION as sriovctl-cni', async () => {
    expect(await runPackaged(['--version'], { arch: 'arm64', name: 'sriovctl', env })).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
    const v = await runPackaged([], { arch: 'arm64', name: 'sriovctl-cni', env: { ...env, CNI_COMMAND: 'VERSION' } });
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout).supportedVersions).toContain('1.1.0');
  });

  it('lends a NIC to a namespace over netlink, reports it, and gives it back as it was', async () => {
    const [nic] = s.veth('a', 'b');
    const node = s.netns('node');
    const before = linkJson(nic);
    const run = (...args: string[]) => runPackaged(args, { arch: 'arm64', name: 'sriovctl', env });

    expect(await run('attach', nic, node)).toEqual({ code: 0, stdout: `${nic}: lent to ${node} as ${nic}\n`, stderr: '' });
    expect(linkJson(nic)).toBeNull();
    expect(linkJson(nic, node)).toMatchObject({ address: before.address, mtu: before.mtu });

    const st = await run('status', '--json');
    expect(st.code).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject([{ nic, owner: `attach:${node}`, phase: 'lent', now: { place: 'target', name: nic } }]);

    expect(await run('detach', nic)).toEqual({ code: 0, stdout: `${nic}: returned as ${nic}\n`, stderr: '' });
    expect(linkJson(nic, node)).toBeNull();
    expect(linkJson(nic)).toMatchObject({ ifname: nic, address: before.address, mtu: before.mtu });
    expect(JSON.parse((await run('status', '--json')).stdout)).toEqual([]);
  });
});
