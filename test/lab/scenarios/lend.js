// On a real SR-IOV driver: the lending engine (dist/lend) with a netdevsim PF — a device the kernel
// RETURNS to the initial namespace when its namespace dies, where veth would be destroyed — and with a VF whose
// PF-side settings live in the real driver. iproute2 is the independent witness.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createVfFixture, NetdevsimPf } = require('../fixture');
const { iproute2VfTable, iproute2SetVfs } = require('../lib/iproute2-vf');
const { vfMac } = require('../lib/vf-settings');
const { ip, tempNetns, poll, looks } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');
const { DIST, session, withEnv } = require('../lib/project');

/** The owner these scenarios lend as: a host attach to the lab's own label. */
const labOwner = (label) => ({ kind: 'attach', target: `lab:${label}` });

/** A private ledger for the scenario (and the fixture's sysfs tree when given). */
function isolate(ctx, sysfsRoot) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-state-'));
  ctx.defer(() => fs.rmSync(stateDir, { recursive: true, force: true }));
  const root = sysfsRoot ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lab-sysfs-'));
  if (!sysfsRoot) ctx.defer(() => fs.rmSync(root, { recursive: true, force: true }));
  withEnv(ctx, { SRIOVCTL_STATE_DIR: stateDir, SRIOVCTL_SYSFS_ROOT: root });
  return { SRIOVCTL_STATE_DIR: stateDir, SRIOVCTL_SYSFS_ROOT: root };
}

async function configuredPf(ctx) {
  const pf = await NetdevsimPf.create({ name: ctx.ifname('pf'), numVfs: 2 });
  ctx.defer(() => pf.destroy());
  ip('link', 'set', 'dev', pf.name, 'address', vfMac(0x41, 0xfe), 'mtu', '1450', 'up');
  return pf;
}

/** Wait until the kernel has put the PF back in the initial namespace after its namespace died. */
async function waitForPfHome(index) {
  const back = await poll(() => ip('-j', 'link', 'show').includes(`"ifindex":${index},`), { timeoutMs: 10_000 });
  expect(back, `the PF (ifindex ${index}) did not come back to the initial namespace`);
}

/** A configured netdevsim PF lent by a fresh session to a new node namespace as `<prefix>in`: what two scenarios start from. */
async function pfLentToNode(ctx, label) {
  isolate(ctx);
  const engine = session(ctx);
  const pf = await configuredPf(ctx);
  const before = looks(pf.name);
  const vfsBefore = iproute2VfTable(pf.name);
  const node = tempNetns(ctx, ctx.ifname('node'));
  const inner = ctx.ifname('in');
  const { record } = engine.lend({ nic: { name: pf.name }, target: { path: `/run/netns/${node}` }, owner: labOwner(label), name: inner });
  return { engine, pf, before, vfsBefore, node, inner, record };
}

module.exports = [
  {
    name: 'lend: a netdevsim PF whose namespace died is given back under its original name',
    async run(ctx) {
      const { engine, pf, before, vfsBefore, node, inner, record } = await pfLentToNode(ctx, 'pf');
      expectEqual(looks(inner, node)?.up, true, 'PF up in the node');
      ip('netns', 'del', node);
      await waitForPfHome(pf.index);
      const back = await engine.giveBack(record.key);
      expectEqual(back.outcome, 'returned', 'outcome');
      expectEqual(looks(pf.name), before, 'PF at home');
      expectEqual(iproute2VfTable(pf.name), vfsBefore, 'VF table');
      expectEqual(engine.findRecords().length, 0, 'records left');
    },
  },
  {
    name: 'lend: a PF that came back as dev<ifindex> (name taken) is renamed back',
    async run(ctx) {
      const { engine, pf, before, node, inner, record } = await pfLentToNode(ctx, 'devn');
      // someone takes the name it has inside, so the kernel must call it dev<ifindex> when it comes back
      ip('link', 'add', inner, 'type', 'veth', 'peer', 'name', ctx.ifname('q'));
      ctx.defer(() => ip('link', 'del', inner, { check: false }));
      ip('netns', 'del', node);
      await waitForPfHome(pf.index);
      const asDevN = ip('-j', 'link', 'show').match(new RegExp(`"ifindex":${pf.index},"ifname":"([^"]+)"`))?.[1];
      ctx.figure('returned by the kernel as', asDevN);
      const back = await engine.giveBack(record.key);
      expectEqual(back.outcome, 'returned', 'outcome');
      expectEqual(looks(pf.name), before, 'PF at home under its original name');
    },
  },
  {
    name: 'lend: lend killed after the move, node namespace deleted, recover() brings the PF home',
    async run(ctx) {
      const env = isolate(ctx);
      const pf = await configuredPf(ctx);
      const before = looks(pf.name);
      const node = tempNetns(ctx, ctx.ifname('node'));
      const request = { nic: { name: pf.name }, target: { path: `/run/netns/${node}` }, owner: labOwner('crash'), name: ctx.ifname('in') };
      // a process of its own, so the failpoint's SIGKILL takes only it: a session from its environment, as a front door makes one
      const script = `const c = require(${JSON.stringify(path.join(DIST, 'config'))}).loadConfig(process.env);
        require(${JSON.stringify(path.join(DIST, 'lend'))}).openSession(c).lend(${JSON.stringify(request)});`;
      const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...env, SRIOVCTL_FAILPOINT: 'lend:moved' } });
      expectEqual(r.signal, 'SIGKILL', 'the lend was killed at its failpoint');
      ip('netns', 'del', node);
      await waitForPfHome(pf.index);
      const report = await session(ctx).recover();
      expectEqual(report.failures, [], 'recover failures');
      expectEqual(looks(pf.name), before, 'PF at home');
    },
  },
  {
    name: 'lend: VF lent with PF-side settings on the real driver, restored exactly on give-back',
    async run(ctx) {
      const fx = await createVfFixture(ctx, { numVfs: 4 });
      isolate(ctx, fx.sysfsRoot);
      const engine = session(ctx);
      // settings someone else put there: give-back must restore exactly these, not defaults
      iproute2SetVfs(fx.pf.name, [{ vf: 1, mac: vfMac(0x42, 1), vlan: 5, qos: 1, spoofchk: true, trust: false, minTxRate: 10, maxTxRate: 100 }]);
      const tableBefore = iproute2VfTable(fx.pf.name);
      const vf = fx.vfs[1];
      const netdevBefore = looks(vf.netdev);
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const { record } = engine.lend({
        nic: { pci: vf.bdf },
        target: { path: `/run/netns/${pod}` },
        owner: labOwner('vf'),
        name: 'net1',
        vf: { mac: vfMac(0x43, 1), vlan: { vlan: 100, qos: 3, proto: '802.1ad' }, spoofchk: false, trust: true, linkState: 'disable', maxTxRate: 500 },
      });
      expectEqual(record.snapshot.vf?.vf, 1, 'VF number in the record');
      const during = iproute2VfTable(fx.pf.name)[1];
      expectEqual(
        { mac: during.mac, vlan: during.vlan, qos: during.qos, proto: during.vlanProto, spoofchk: during.spoofchk, trust: during.trust, linkState: during.linkState, min: during.minTxRate, max: during.maxTxRate },
        { mac: vfMac(0x43, 1), vlan: 100, qos: 3, proto: '802.1ad', spoofchk: false, trust: true, linkState: 'disable', min: 10, max: 500 },
        'VF 1 while lent (min rate kept when only max was asked)',
      );
      expectEqual(iproute2VfTable(fx.pf.name).filter((v) => v.vf !== 1), tableBefore.filter((v) => v.vf !== 1), 'other VFs untouched');
      expect(looks('net1', pod), 'VF netdev in the pod as net1');
      ip('-n', pod, 'link', 'set', 'net1', 'mtu', '1280');
      const back = await engine.giveBack(record.key);
      expectEqual(back.outcome, 'returned', 'outcome');
      expectEqual(iproute2VfTable(fx.pf.name), tableBefore, 'VF table restored exactly');
      expectEqual(looks(vf.netdev), netdevBefore, 'VF netdev at home');
    },
  },
  {
    name: "lend: a VF whose PF's namespace is gone writes no PF-side setting into the namespace that was given its inode",
    async run(ctx) {
      const fx = await createVfFixture(ctx, { numVfs: 2 });
      const { SRIOVCTL_STATE_DIR: stateDir } = isolate(ctx, fx.sysfsRoot);
      const engine = session(ctx);
      const vf = fx.vfs[1];
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const stranger = tempNetns(ctx, ctx.ifname('str'));
      // a link in the stranger with the PF's ifindex and name: by inode alone, give-back would take it for the PF
      ip('-n', stranger, 'link', 'add', fx.pf.name, 'index', String(fx.pf.index), 'type', 'dummy');
      const strangerBefore = looks(fx.pf.name, stranger);
      const { record } = engine.lend({ nic: { pci: vf.bdf }, target: { path: `/run/netns/${pod}` }, owner: labOwner('pfns'), name: 'net1', vf: { vlan: { vlan: 7, qos: 0, proto: '802.1Q' } } });
      const pfNetns = record.snapshot.vf.pfNetns;
      expect(/^[0-9]+$/.test(String(pfNetns.cookie)), `the PF's namespace is recorded with its cookie (${JSON.stringify(pfNetns)})`);
      // as the kernel's inode reuse leaves it: the PF's namespace gone, its inode now the stranger's, its cookie kept
      const file = path.join(stateDir, 'records', `${record.key}.json`);
      const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
      const st = fs.statSync(`/run/netns/${stranger}`);
      stored.snapshot.vf.pfNetns = { ...pfNetns, id: { dev: st.dev, ino: st.ino }, path: `/run/netns/${stranger}`, pid: null, initial: false };
      fs.writeFileSync(file, JSON.stringify(stored, null, 2));

      const back = await engine.giveBack(record.key);
      expect(back.warnings.some((w) => w.includes('namespace is gone; VF 1 settings not restored')), `warned: ${JSON.stringify(back.warnings)}`);
      expect(looks(vf.netdev), 'VF netdev at home');
      expectEqual(looks(fx.pf.name, stranger), strangerBefore, "the stranger's link untouched");
      expectEqual(fs.readdirSync(path.join(stateDir, 'records')), [], 'no record left');
    },
  },
];
