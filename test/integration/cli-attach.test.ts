// `sriovctl attach / detach / status` as a real process (node bin/sriovctl.js), against real namespaces with veth
// stand-ins that a simulated sysfs tree knows as SR-IOV PFs.
import { describe, expect, it } from 'vitest';
import { ip, ipIn } from '../helpers/kernel';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { fakeContainerRuntimes } from '../helpers/cli-fake-runtime';
import type { StatusEntry } from '../../src/cli/status';
import { lend } from '../helpers/engine';
import { execFileSync } from 'node:child_process';
import { giveRecordedInodeTo } from '../helpers/ledger-record';
import { playHost } from '../helpers/play-host';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `ip …` inside the namespace of process `pid`. */
function ipInPid(pid: number, ...args: string[]): string {
  return execFileSync('nsenter', ['-t', String(pid), '-n', 'ip', ...args], { encoding: 'utf8' });
}

const PF_A = '0000:3b:00.0';
const PF_B = '0000:3b:00.1';

describe('sriovctl attach / detach / status', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  it('lends to a named namespace, shows it, and gives it back exactly — even renamed, down and changed inside', async () => {
    const nic = w.pf('a', PF_A);
    ip('link', 'set', nic.name, 'up');
    const before = w.state(nic.name)!;
    const node = w.netns('node');

    const a = await w.run('attach', nic.name, node);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(`${nic.name}: lent to ${node} as ${nic.name}\n`);
    expect(w.state(nic.name)).toBeNull();
    expect(w.state(nic.name, node)).toMatchObject({ mac: before.mac, mtu: before.mtu });

    const st = await w.run('status', '--json');
    expect(st.code).toBe(0);
    const entries = JSON.parse(st.stdout) as StatusEntry[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      nic: nic.name,
      pciAddress: PF_A,
      owner: `attach:${node}`,
      phase: 'lent',
      home: { initial: true },
      target: { path: `/var/run/netns/${node}`, name: nic.name },
      now: { place: 'target', name: nic.name, namespace: `/var/run/netns/${node}` },
    });
    expect(Date.parse(entries[0].since)).toBeGreaterThan(Date.now() - 60_000);
    const text = await w.run('status');
    expect(text.stdout).toMatch(new RegExp(`^NIC .*OWNER .*PHASE .*NOW .*AGE\\n${nic.name} \\(${PF_A}\\) +attach:${node} +lent +target: ${nic.name} in /var/run/netns/${node} `));

    // the borrower renames it, takes it down and changes its MTU (a veth stand-in has no PCI bus-info: renamed,
    // it is still recognised by its MAC and ifindex)
    ipIn(node, 'link', 'set', nic.name, 'down');
    ipIn(node, 'link', 'set', nic.name, 'name', 'eth7', 'mtu', '1300');
    expect(JSON.parse((await w.run('status', '--json')).stdout)[0].now).toMatchObject({ place: 'target', name: 'eth7' });

    const d = await w.run('detach', nic.name);
    expect(d.stderr).toBe('');
    expect(d.code).toBe(0);
    expect(d.stdout).toBe(`${nic.name} (${PF_A}): returned as ${nic.name}\n`);
    expect(w.state(nic.name)).toEqual(before);
    expect(w.state('eth7', node)).toBeNull();
    expect(w.records()).toEqual([]);

    // a second detach is a no-op
    const again = await w.run('detach', nic.name);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`${nic.name}: not lent\n`);
    expect(JSON.parse((await w.run('status', '--json')).stdout)).toEqual([]);
    expect((await w.run('status')).stdout).toMatch(/^no NIC is lent\n/);
  });

  it('takes path and pid: targets, --as, and detach by PCI address', async () => {
    const a = w.pf('a', PF_A);
    const b = w.pf('b', PF_B);
    const c = w.plainNic('c');
    const node = w.netns('node');
    const ctr = await w.container();

    expect((await w.run('attach', a.name, `/var/run/netns/${node}`, '--as', 'eth1')).code).toBe(0);
    expect(w.state('eth1', node)).toMatchObject({ mac: a.mac });
    expect((await w.run('attach', b.name, `pid:${ctr.pid}`, '--as', 'net1')).stdout).toBe(`${b.name}: lent to pid:${ctr.pid} as net1\n`);
    expect(ipInPid(ctr.pid, 'link', 'show', 'net1')).toContain(b.mac);
    expect((await w.run('attach', c.name, `/proc/${ctr.pid}/ns/net`)).code).toBe(0);

    const owners = (JSON.parse((await w.run('status', '--json')).stdout) as StatusEntry[]).map((e) => [e.nic, e.owner, e.now.place]);
    expect(owners.sort()).toEqual(
      [
        [a.name, `attach:/var/run/netns/${node}`, 'target'],
        [b.name, `attach:pid:${ctr.pid}`, 'target'],
        [c.name, `attach:/proc/${ctr.pid}/ns/net`, 'target'],
      ].sort(),
    );

    // by PCI address, and a pid target reached however it was typed
    const d = await w.run('detach', PF_A);
    expect(d.stdout).toBe(`${a.name} (${PF_A}): returned as ${a.name}\n`);
    const all = await w.run('detach', '--all', '--target', `pid:${ctr.pid}`);
    expect(all.code).toBe(0);
    expect(all.stdout.split('\n').sort().join('\n')).toBe(
      ['', `${b.name} (${PF_B}): returned as ${b.name}`, `${c.name}: returned as ${c.name}`].join('\n'),
    );
    for (const n of [a, b, c]) expect(w.state(n.name)).toEqual(n);
    expect(w.records()).toEqual([]);
  });

  it.each(['docker', 'podman'])('resolves %s:<container> through the runtime and detaches by that target', async (rt) => {
    const nic = w.pf('a', PF_A);
    const ctr = await w.container();
    const fake = fakeContainerRuntimes({ 'kind-worker': { pid: ctr.pid }, stopped: { pid: 0 } });
    w.s.onCleanup(() => fake.remove());
    w.env.pathPrefix = fake.dir;
    w.env.extra = fake.env;

    const stopped = await w.run('attach', nic.name, `${rt}:stopped`);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toBe(`sriovctl: attach ${nic.name} to ${rt}:stopped: target ${rt}:stopped: container stopped is not running\n`);

    const a = await w.run('attach', nic.name, `${rt}:kind-worker`);
    expect(a.code).toBe(0);
    expect(fake.calls()).toContain(`${rt} inspect --type container --format {{.State.Pid}} kind-worker`);
    expect(ipInPid(ctr.pid, 'link', 'show', nic.name)).toContain(nic.mac);

    const d = await w.run('detach', '--all', '--target', `${rt}:kind-worker`);
    expect(d.code).toBe(0);
    expect(w.state(nic.name)).toEqual(nic);
  });

  it("detach --all --target: a namespace that was given a gone target's inode is not that target", async () => {
    const nic = w.pf('a', PF_A);
    const node = w.netns('node');
    const newer = w.netns('newer');
    expect((await w.run('attach', nic.name, node)).code).toBe(0);
    const [key] = w.records().map((f) => f.replace(/\.json$/, ''));
    const putBack = giveRecordedInodeTo(w.env.stateDir, key, 'target', `/var/run/netns/${newer}`);

    // by inode alone `newer` would be the NIC's target, and detach would give back a NIC never lent to it
    const d = await w.run('detach', '--all', '--target', newer);
    expect(d.stderr).toBe('');
    expect(d.stdout).toBe(`nothing is lent to ${newer}\n`);
    expect(w.records()).toHaveLength(1);
    expect(w.state(nic.name, node)).not.toBeNull();

    putBack();
    expect((await w.run('detach', '--all', '--target', node)).code).toBe(0);
    expect(w.state(nic.name)).toEqual(nic);
  });

  it('gives back to a non-initial home (a CI job namespace), wherever detach runs', async () => {
    const job = w.netns('job');
    const node = w.netns('node');
    const nic = w.pf('a', PF_A, { netns: job });

    const a = await w.runIn(job, 'attach', nic.name, node);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(w.state(nic.name, job)).toBeNull();
    const [entry] = JSON.parse((await w.run('status', '--json')).stdout) as StatusEntry[];
    expect(entry.home).toMatchObject({ initial: false });

    const d = await w.run('detach', nic.name); // from the initial namespace
    expect(d.code).toBe(0);
    expect(w.state(nic.name, job)).toEqual(nic);
    expect(w.state(nic.name)).toBeNull();
  });

  it('refuses a name collision in the target, changing nothing', async () => {
    const nic = w.pf('a', PF_A);
    const node = w.netns('node');
    w.plainNic('x', node); // the node already has <prefix>x
    ipIn(node, 'link', 'add', nic.name, 'type', 'veth', 'peer', 'name', w.s.name('y')); // and the NIC's own name

    const r = await w.run('attach', nic.name, node);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(new RegExp(`^sriovctl: attach ${nic.name} to ${node}: .*${nic.name}.*taken`));
    expect(w.state(nic.name)).toEqual(nic);
    expect(w.records()).toEqual([]);

    const as = await w.run('attach', nic.name, node, '--as', w.s.name('x'));
    expect(as.code).toBe(1);
    expect(w.state(nic.name)).toEqual(nic);
    expect(w.records()).toEqual([]);
  });

  it('returns under a fallback name when the home name was taken meanwhile: exit 3', async () => {
    const nic = w.pf('a', PF_A);
    const node = w.netns('node');
    expect((await w.run('attach', nic.name, node)).code).toBe(0);
    ip('link', 'add', nic.name, 'type', 'veth', 'peer', 'name', w.s.name('y')); // a newcomer takes the name
    w.s.onCleanup(() => ip('link', 'del', w.s.name('y')));

    const d = await w.run('detach', nic.name);
    expect(d.code).toBe(3);
    const fallback = /returned under a fallback name as (\S+)\n$/.exec(d.stdout)?.[1];
    expect(fallback).toBeDefined();
    expect(d.stderr).toMatch(/warning: .*taken/);
    expect(w.state(fallback!)).toMatchObject({ mac: nic.mac, mtu: nic.mtu });
    w.s.onCleanup(() => ip('link', 'del', fallback!));
    expect(w.records()).toEqual([]);
  });

  it('bad arguments change nothing: unknown NIC, unknown target, dead pid, too many VFs', async () => {
    const nic = w.pf('a', PF_A, { spec: { totalVfs: 8 } });
    const node = w.netns('node');
    const cases: [string[], RegExp][] = [
      [['attach', w.s.name('zz'), node], new RegExp(`^sriovctl: attach ${w.s.name('zz')} to ${node}: .+`)],
      [['attach', nic.name, w.s.name('nons')], new RegExp(`^sriovctl: attach ${nic.name} to ${w.s.name('nons')}: target ${w.s.name('nons')}: no such network namespace`)],
      [['attach', nic.name, 'pid:999999999'], new RegExp(`^sriovctl: attach ${nic.name} to pid:999999999: target pid:999999999: no such process`)],
      [['attach', nic.name, node, '--vfs', '9'], new RegExp(`^sriovctl: attach ${nic.name} to ${node}: ${nic.name}: 9 VFs asked, the PF supports at most 8`)],
      [['attach', '0000:99:00.0', node], new RegExp(`^sriovctl: attach 0000:99:00.0 to ${node}: .+`)],
    ];
    for (const [args, message] of cases) {
      const r = await w.run(...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(w.state(nic.name)).toEqual(nic);
      expect(w.records()).toEqual([]);
    }
    expect(w.sysfs.sim.read(`${w.sysfs.sim.pciDir(PF_A)}/sriov_numvfs`)).toBe('0\n');
    const unknown = await w.run('detach', w.s.name('zz'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`sriovctl: detach ${w.s.name('zz')}: no record of it, and no such NIC here\n`);
  });

  it('two concurrent attach runs never take the same NIC: one wins, the other fails cleanly', async () => {
    const nic = w.pf('a', PF_A);
    const n1 = w.netns('n1');
    const n2 = w.netns('n2');
    for (let round = 0; round < 3; round++) {
      const [r1, r2] = await Promise.all([w.run('attach', nic.name, n1), w.run('attach', nic.name, n2)]);
      expect([r1.code, r2.code].sort(), `${r1.stderr}${r2.stderr}`).toEqual([0, 1]);
      const loser = r1.code === 1 ? r1 : r2;
      expect(loser.stderr.trim().split('\n')).toHaveLength(1);
      const where = [w.state(nic.name, n1), w.state(nic.name, n2)].filter(Boolean);
      expect(where).toHaveLength(1);
      expect(w.records()).toHaveLength(1);
      expect((await w.run('detach', nic.name)).code).toBe(0);
      expect(w.state(nic.name)).toEqual(nic);
    }
  });

  it('-v prints each step of the lend on its own line; -q prints nothing on success', async () => {
    const nic = w.pf('a', PF_A);
    const node = w.netns('node');
    const v = await w.run('-v', 'attach', nic.name, node);
    expect(v.code).toBe(0);
    expect(v.stderr).toMatch(new RegExp(`^ {2}recorded ${nic.name} in .*\\n {2}moved ${nic.name} to /var/run/netns/${node} as ${nic.name}\\n`));
    const q = await w.run('-q', 'detach', nic.name);
    expect(q).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(w.state(nic.name)).toEqual(nic);
  });

  it('status lists CNI attachments too, and detach leaves them to their owner', async () => {
    const nic = w.pf('a', PF_A);
    const pod = w.netns('pod');
    lend({ nic: { name: nic.name }, target: { path: `/var/run/netns/${pod}` }, owner: { kind: 'pod', containerId: 'abc123', ifname: 'net1' }, name: 'net1' });

    const [entry] = JSON.parse((await w.run('status', '--json')).stdout) as StatusEntry[];
    expect(entry).toMatchObject({ owner: 'cni:abc123/net1', now: { place: 'target', name: 'net1' } });
    const d = await w.run('detach', nic.name);
    expect(d.code).toBe(1);
    expect(d.stderr).toMatch(/is lent by cni:abc123\/net1, not by attach/);
    expect(w.state('net1', pod)).not.toBeNull();
    expect((await w.run('detach', '--all')).stdout).toBe('nothing is lent by attach\n');
    expect(w.state('net1', pod)).not.toBeNull();
  });
  it("refuses the host's uplink — the link of its default route, the link to its nameserver — in one line, changing nothing; --allow-uplink lends it", async () => {
    // the CLI runs in `host`, which plays the host: its own default route and nameserver (never this machine's)
    const host = w.netns('host');
    const node = w.netns('node');
    const uplink = w.plainNic('up', host);
    const dnsLink = w.plainNic('dns', host);
    const plain = w.plainNic('pl', host);
    const played = playHost(w.s, host, { uplink: uplink.name, dnsLink: dnsLink.name });
    const hostBefore = { links: [uplink, dnsLink, plain].map((n) => w.state(n.name, host)), routes: ipIn(host, 'route', 'show', 'table', 'all') };
    const locks = () => (existsSync(join(w.env.stateDir, 'locks')) ? readdirSync(join(w.env.stateDir, 'locks')) : []);

    const refusals = [
      [uplink.name, `default via ${played.gateway} in table main`],
      [dnsLink.name, `route to nameserver ${played.nameserver} (${played.nameserver}/32 via 10.62.0.1 in table main)`],
    ];
    for (const [name, route] of refusals) {
      const r = await w.runIn(host, 'attach', name, node);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `sriovctl: attach ${name} to ${node}: device ${name} is the host's uplink (${route}): lending it would cut the host off (--allow-uplink lends it anyway)\n`,
      );
    }
    expect({ links: [uplink, dnsLink, plain].map((n) => w.state(n.name, host)), routes: ipIn(host, 'route', 'show', 'table', 'all') }).toEqual(hostBefore);
    expect(w.records()).toEqual([]);
    expect(locks()).toEqual([]);

    // a link neither route leaves through is lent as before
    const lent = await w.runIn(host, 'attach', plain.name, node);
    expect(lent.code, lent.stderr).toBe(0);
    expect(w.state(plain.name, node)).not.toBeNull();
    expect((await w.runIn(host, 'detach', plain.name)).code).toBe(0);

    const allowed = await w.runIn(host, 'attach', uplink.name, node, '--allow-uplink');
    expect(allowed.stderr).toBe('');
    expect(allowed.stdout).toBe(`${uplink.name}: lent to ${node} as ${uplink.name}\n`);
    expect(w.state(uplink.name, node)).toMatchObject({ mac: uplink.mac });
    expect((await w.runIn(host, 'detach', uplink.name)).code).toBe(0);
    expect(w.state(uplink.name, host)).toEqual(hostBefore.links[0]);
    expect(w.records()).toEqual([]);
  });

  it('refuses a NIC a macvlan at home is stacked on, in one line; --allow-in-use lends it, and detach deletes what the borrower stacked on it', async () => {
    const nic = w.plainNic('iu');
    const node = w.netns('node');
    const upper = w.s.name('ium');
    ip('link', 'add', upper, 'link', nic.name, 'type', 'macvlan');
    w.s.onCleanup(() => ip('link', 'del', upper));
    const before = w.state(nic.name);

    const r = await w.run('attach', nic.name, node);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `sriovctl: attach ${nic.name} to ${node}: device ${nic.name} is in use at home: macvlan ${upper} is stacked on it: it keeps using it while it is lent (--allow-in-use lends it anyway)\n`,
    );
    expect(w.state(nic.name)).toEqual(before);
    expect(w.records()).toEqual([]);

    const allowed = await w.run('attach', nic.name, node, '--allow-in-use');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain(`${nic.name}: in use at home: macvlan ${upper} is stacked on it`);
    const theirs = w.s.name('iup');
    ipIn(node, 'link', 'add', theirs, 'link', nic.name, 'type', 'macvlan');
    const back = await w.run('detach', nic.name);
    expect(back.code).toBe(3);
    expect(back.stderr).toContain(`deleted macvlan ${theirs}, stacked on it in the namespace it was lent to`);
    expect(() => ipIn(node, 'link', 'show', theirs)).toThrow();
    expect(w.state(nic.name)).toEqual(before);
    expect(JSON.parse(ip('-j', '-d', 'link', 'show', upper))[0].link).toBe(nic.name);
  });
});
