// A VF's L3 state at home — addresses, routes in the main table and table 100, changed sysctls (l3-world.ts) —
// comes back, checked with the kernel's own tools (test/helpers/state-diff.ts): zero differences. The VF is a
// stand-in (a veth the simulated tree names and addresses as a VF of a stand-in PF) in a namespace playing the host,
// lent by PCI address: by the CNI plugin in VF mode (sriov-cni's `deviceID`), and nested, host → node → pod, given
// back by `detach` on the host and by `cleanup` after the node's death.
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { ip } from '../helpers/kernel';
import { loadL3 } from '../helpers/l3-world';
import { captureNic, diffCaptures, type NicCapture } from '../helpers/state-diff';

const PF = '0000:7d:00.0';

describe("a VF's L3 state at home comes back", () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  /** A host-playing namespace with a stand-in VF carrying L3 state, and how the VF looks there before anything. */
  async function vfAtHome(): Promise<{ host: string; vf: string; vfBdf: string; before: NicCapture }> {
    const host = w.netns('host');
    const [{ bdf: vfBdf, nic, peer }] = w.pfWithVfs('a', PF, 1, host).vfs;
    loadL3(w.s, host, { nic: nic.name, peer }, 'l');
    return { host, vf: nic.name, vfBdf, before: await captureNic(host, nic.name) };
  }

  describe('CNI ADD then DEL in VF mode (deviceID)', () => {
    const ipam = { type: 'static', addresses: [{ address: '10.88.0.2/24' }] };

    /** The VF lent by ADD to a pod; `del()` is that pod's DEL. */
    async function added() {
      const home = await vfAtHome();
      const pod = w.netns('pod');
      const add = w.vfPlugin('ADD', home.host, pod, home.vfBdf, ipam);
      expect(add.status, add.stderr + add.stdout).toBe(0);
      expect(w.state('net1', pod)).not.toBeNull();
      return { ...home, pod, del: () => w.vfPlugin('DEL', home.host, pod, home.vfBdf, ipam) };
    }

    it('DEL', async () => {
      const { host, vf, before, del } = await added();
      const r = del();
      expect(r.status, r.stderr + r.stdout).toBe(0);
      expect(diffCaptures(before, await captureNic(host, vf))).toEqual([]);
      expect(w.records()).toEqual([]);
    });

    it('DEL after the pod namespace was deleted (the VF pushed to the initial namespace, as a physical one is)', async () => {
      const { host, vf, pod, before, del } = await added();
      ip('-n', pod, 'link', 'set', 'net1', 'netns', '1');
      ip('netns', 'del', pod);
      const r = del();
      expect(r.status, r.stderr + r.stdout).toBe(0);
      expect(diffCaptures(before, await captureNic(host, vf))).toEqual([]);
      expect(w.records()).toEqual([]);
    });
  });

  describe('nested: lent to a node, then by the node\'s plugin to a pod', () => {
    /** The VF lent host → node → pod, each layer changing its MTU. */
    async function lendThrough() {
      const home = await vfAtHome();
      const node = w.netns('node');
      const pod = w.netns('pod');
      const attach = await w.runIn(home.host, 'attach', home.vfBdf, node);
      expect(attach.code, attach.stderr).toBe(0);
      ip('-n', node, 'link', 'set', home.vf, 'mtu', '1300');
      const add = w.nodePluginAdd(node, pod, home.vfBdf);
      expect(add.status, add.stderr + add.stdout).toBe(0);
      ip('-n', pod, 'link', 'set', 'net1', 'mtu', '1280');
      expect(w.records()).toHaveLength(2);
      return { ...home, node };
    }

    it('detach of the VF on the host', async () => {
      const { host, vf, vfBdf, before } = await lendThrough();
      const d = await w.runIn(host, 'detach', vfBdf);
      expect(d).toMatchObject({ code: 0, stderr: '' });
      expect(diffCaptures(before, await captureNic(host, vf))).toEqual([]);
      expect(w.records()).toEqual([]);
    });

    it('cleanup on the host after the node namespace was deleted', async () => {
      const { host, vf, vfBdf, node, before } = await lendThrough();
      ip('netns', 'del', node);
      const c = await w.runIn(host, 'cleanup');
      // exit 3: the pod's lend could not go back to its home (the node), and says so; the host's lend came home whole
      expect(c.stderr.trim().split('\n')).toEqual([`sriovctl: warning: ${vf} (${vfBdf}): home /var/run/netns/${node} no longer exists; returning to the initial namespace`]);
      expect(c.code, c.stdout).toBe(3);
      expect(diffCaptures(before, await captureNic(host, vf))).toEqual([]);
      expect(w.records()).toEqual([]);
    });
  });
});
