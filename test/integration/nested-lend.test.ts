// Nested lends without a container runtime: host → node → pod, each a named namespace. The host lends a VF to the
// node (`sriovctl attach`); the node changes it (its MTU) and its plugin (sriovctl-cni ADD run inside the node
// namespace, on the same state dir and sysfs tree) lends it on to a pod, which changes it again. Both give-back
// paths of the host — `detach` of the VF, and `cleanup` after the node namespace died — must undo the pod's lend
// first (into the node, or where the kernel would put it when the node is gone), then the node's: the VF home with
// its name, MAC, MTU and state, no record left. Undoing the outer record first would leave it in the node (or the
// pod) with the pod's MTU and no record.
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { findRecords } from '../helpers/engine';
import { ip } from '../helpers/kernel';
import type { NicState } from '../helpers/lend-fixture';

const PF = '0000:7c:00.0';

describe('a VF lent to a node and on to a pod by the node\'s plugin', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  /** The VF lent host → node → pod; each layer changed it. */
  async function lendThrough(): Promise<{ vf: NicState; vfBdf: string; node: string; pod: string }> {
    const { vfs } = w.pfWithVfs('a', PF, 1);
    const [{ bdf: vfBdf, nic: vf }] = vfs;
    const node = w.netns('node');
    const pod = w.netns('pod');
    const attach = await w.run('attach', vfBdf, node);
    expect(attach.code, attach.stderr).toBe(0);
    ip('-n', node, 'link', 'set', vf.name, 'mtu', '1300');
    const add = w.nodePluginAdd(node, pod, vfBdf);
    expect(add.status, add.stderr + add.stdout).toBe(0);
    ip('-n', pod, 'link', 'set', 'net1', 'mtu', '1280');
    expect(w.state('net1', pod)).toMatchObject({ mac: vf.mac, mtu: 1280 });
    const records = findRecords();
    expect(records.map((r) => [r.owner, r.key.includes('_in_'), r.snapshot.mtu])).toEqual([
      [`attach:${node}`, false, 1450],
      [`cni:ctr-${w.s.prefix}/net1`, true, 1300],
    ]);
    // a stand-in VF: its PF is a veth with no VF table, so no PF-side settings are recorded (nor changed)
    for (const r of records) expect(r.snapshot.vf).toBeNull();
    return { vf, vfBdf, node, pod };
  }

  /** Home as it was, nowhere else, no record. */
  function expectHome(vf: NicState, node: string | null, pod: string): void {
    expect(w.state(vf.name)).toEqual(vf);
    expect(w.state('net1', pod)).toBeNull();
    if (node) expect(w.state(vf.name, node)).toBeNull();
    expect(w.records()).toEqual([]);
  }

  it('detach of the VF on the host: the pod\'s lend undone first, then the node\'s', async () => {
    const { vf, vfBdf, node, pod } = await lendThrough();
    const d = await w.run('detach', vfBdf);
    expect(d.stderr).toBe('');
    expect(d.code).toBe(0);
    expectHome(vf, node, pod);
  });

  it('the node namespace deleted, then cleanup on the host: both records finished, the VF home intact', async () => {
    const { vf, node, pod } = await lendThrough();
    ip('netns', 'del', node);
    const c = await w.run('cleanup', '--json');
    expect(c.stderr).toBe('');
    // exit 3: the pod's lend could not go back to its home (the node), and says so
    expect(c.code, c.stdout).toBe(3);
    expect((JSON.parse(c.stdout) as { owner: string; outcome: string; warnings: string[] }[]).map((e) => [e.owner, e.outcome, e.warnings])).toEqual([
      [`cni:ctr-${w.s.prefix}/net1`, 'returned', [`home /var/run/netns/${node} no longer exists; returning to the initial namespace`]],
      [`attach:${node}`, 'returned', []],
    ]);
    expectHome(vf, null, pod);
  });
});
