// What a namespace move makes the kernel forget — addresses, routes through the NIC, per-link sysctls — comes back
// on every give-back path, checked with the kernel's own tools (test/helpers/state-diff.ts): zero differences. The
// NIC's home is a namespace playing the host (test/helpers/l3-world.ts).
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { ledgerRecords, netnsPath, runCni } from '../helpers/cni-run';
import { deviceConf, useCniWorld, type CniWorld } from '../helpers/cni-world';
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';
import { giveBack, lend } from '../helpers/engine';
import { ip, ipIn } from '../helpers/kernel';
import { l3Home } from '../helpers/l3-world';
import { useLendScratch } from '../helpers/lend-fixture';
import { captureNic, diffCaptures } from '../helpers/state-diff';

describe('a round trip brings back what the kernel forgets on a move', () => {
  describe('through the engine', () => {
    const w = useLendScratch();

    it('lend and give back', async () => {
      const s = w.scratch();
      const { home, nic } = l3Home(s);
      const pod = s.netns('pod');
      const before = await captureNic(home, nic.name);
      const { record } = lend({ nic: { name: nic.name, in: { path: netnsPath(home) } }, target: { path: netnsPath(pod) }, owner: { kind: 'attach', target: 'test:l3' } });
      expect(record.snapshot.l3?.addresses.map((a) => a.cidr)).toContain('2001:db8:1::11/64');
      const back = await giveBack(record.key);
      expect(back).toMatchObject({ outcome: 'returned', warnings: [] });
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('restoring a NIC that never left (a lend failed before its move) changes nothing and is not an error', async () => {
      const s = w.scratch();
      const { home, nic } = l3Home(s);
      const pod = s.netns('pod');
      const before = await captureNic(home, nic.name);
      // the failpoint is the configuration's, as a front door reads it (SRIOVCTL_FAILPOINT)
      const { stateDir, sysfsRoot } = w.roots();
      const failing = openSession(loadConfig({ SRIOVCTL_FAILPOINT: 'lend:recorded:error' }, { stateDir, sysfsRoot }));
      try {
        expect(() => failing.lend({ nic: { name: nic.name, in: { path: netnsPath(home) } }, target: { path: netnsPath(pod) }, owner: { kind: 'attach', target: 'test:l3' } })).toThrow(
          /failpoint lend:recorded/,
        );
      } finally {
        failing.close();
      }
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });
  });

  describe('sriovctl attach / detach / cleanup', () => {
    let w: CliWorld;
    useCliWorld((world) => (w = world));

    /** The host playing namespace with its NIC, a pod namespace, and how the NIC looks before anything. */
    async function start() {
      const l3 = l3Home(w.s);
      return { ...l3, pod: w.netns('pod'), before: await captureNic(l3.home, l3.nic.name) };
    }

    it('detach', async () => {
      const { home, nic, pod, before } = await start();
      expect((await w.runIn(home, 'attach', nic.name, pod)).code).toBe(0);
      const r = await w.runIn(home, 'detach', nic.name);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('a failed attach rolled back after the move', async () => {
      const { home, nic, pod, before } = await start();
      const inHome = await w.runWithIn(home, { SRIOVCTL_FAILPOINT: 'lend:configured:error' }, 'attach', nic.name, pod);
      expect(inHome.code).toBe(1);
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('a detach killed half-way (addresses back, routes not yet), then detach again', async () => {
      const { home, nic, pod, before } = await start();
      expect((await w.runIn(home, 'attach', nic.name, pod)).code).toBe(0);
      const killed = await w.runWithIn(home, { SRIOVCTL_FAILPOINT: 'return:addresses-restored' }, 'detach', nic.name);
      expect(killed.code).not.toBe(0);
      expect(w.records()).toHaveLength(1);
      expect((await w.runIn(home, 'detach', nic.name))).toMatchObject({ code: 0, stderr: '' });
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('cleanup after a crash mid-attach', async () => {
      const { home, nic, pod, before } = await start();
      const crashed = await w.runWithIn(home, { SRIOVCTL_FAILPOINT: 'lend:moved' }, 'attach', nic.name, pod);
      expect(crashed.code).not.toBe(0);
      expect((await w.runIn(home, 'cleanup')).code).toBe(0);
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('cleanup after the target namespace was deleted (the NIC pushed to the initial namespace, as a physical one is)', async () => {
      const { home, nic, pod, before } = await start();
      expect((await w.runIn(home, 'attach', nic.name, pod)).code).toBe(0);
      // a veth dies with its namespace; a physical NIC goes to the initial namespace under its name: do what the
      // kernel does for it, then delete the namespace
      ipIn(pod, 'link', 'set', nic.name, 'netns', '1');
      ip('netns', 'del', pod);
      const r = await w.runIn(home, 'cleanup');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('says what it left to its owner, and exits 3 naming what it could not restore, the rest restored', async () => {
      const { home, nic, other } = l3Home(w.s);
      ipIn(home, 'addr', 'add', '192.0.2.50/24', 'dev', nic.name, 'valid_lft', '3000', 'preferred_lft', '3000');
      ipIn(home, 'route', 'add', '10.99.0.0/16', 'via', '192.0.2.1', 'dev', nic.name, 'proto', 'dhcp');
      const pod = w.netns('pod');
      const before = await captureNic(home, nic.name);
      expect((await w.runIn(home, 'attach', nic.name, pod)).code).toBe(0);
      ipIn(home, 'link', 'del', other); // the other hop of the multipath routes is gone
      const r = await w.runIn(home, 'detach', nic.name);
      expect(r.code).toBe(3);
      expect(r.stdout).toContain(`${nic.name}: left to its owner: address 192.0.2.50/24: a lease with a finite lifetime`);
      expect(r.stdout).toContain(`${nic.name}: left to its owner: route 10.99.0.0/16 via 192.0.2.1: a DHCP client's`);
      expect(r.stderr).toMatch(/warning: .*route 10\.60\.0\.0\/16 nexthops via 192\.0\.2\.1, via 198\.51\.100\.2: .*not restored/);
      expect(r.stderr).toMatch(/warning: .*route 2001:db8:30::\/48 nexthops .*not restored/);
      const left = diffCaptures(before, await captureNic(home, nic.name));
      // the lease, the kernel's local route for it, the DHCP client's route, and the multipath routes whose other hop is gone
      const expected = /^(addresses\.192\.0\.2\.50\/24\.|routes\.local 192\.0\.2\.50 |routes\.unicast (10\.99\.0\.0\/16|10\.60\.0\.0\/16|2001:db8:30::\/48) )/;
      expect(left.some((d) => expected.test(d))).toBe(true);
      expect(left.filter((d) => !expected.test(d))).toEqual([]);
    });
  });

  describe('CNI ADD / DEL (whole-device mode)', () => {
    let w: CniWorld;
    useCniWorld((world) => (w = world));
    /** The NIC at home with its L3 state, and how it looks, lent by ADD to a pod; `del()` is that pod's DEL. */
    async function added() {
      const { home, nic } = l3Home(w.s);
      const pod = w.s.netns('pod');
      const config = deviceConf(w.s, nic, { type: 'static', addresses: [{ address: '10.88.0.2/24' }] });
      const call = (command: string) => runCni({ command, containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config, inNetns: home }, w.roots);
      const before = await captureNic(home, nic.name);
      expect(call('ADD').status).toBe(0);
      return { home, nic, pod, before, del: () => call('DEL') };
    }

    it('DEL', async () => {
      const { home, nic, before, del } = await added();
      expect(del().status).toBe(0);
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('DEL after the pod namespace was deleted (the NIC pushed to the initial namespace, as a physical one is)', async () => {
      const { home, nic, pod, before, del: delOf } = await added();
      // a veth dies with its namespace; a physical NIC goes to the initial namespace under its name (net1): do what
      // the kernel does for it (a stand-in has no PCI address to be found by, only its name and MAC)
      ipIn(pod, 'link', 'set', 'net1', 'netns', '1');
      ip('netns', 'del', pod);
      const del = delOf();
      expect(del.status, del.stderr + del.stdout).toBe(0);
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
      expect(ledgerRecords(w.roots.stateDir)).toEqual([]);
    });
  });
});
