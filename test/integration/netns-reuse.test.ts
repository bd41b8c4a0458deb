// A record's namespace is known by its nsfs inode, and the kernel gives that inode to the next namespace made once
// the recorded one is gone (seen here: `ip netns add` right after `ip netns del` gets the same inode). Records
// therefore carry the namespace's cookie too (SO_NETNS_COOKIE, never reused), and a namespace that has the
// recorded inode but another cookie is not the recorded one. Each test here puts a record in exactly the state
// that reuse leaves: its namespace gone, its inode now another live namespace's (the record's id pointed at a
// scratch namespace, its cookie kept) — deterministic, where waiting for the kernel to hand the inode to us
// would race every other test making namespaces at the same time.
import { expect, it } from 'vitest';
import { openSession } from '../../src/lend';
import { ledgerRecords, netnsPath, runCni, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld } from '../helpers/cni-world';
import { ip, type Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { giveRecordedInodeTo } from '../helpers/ledger-record';
import { loadConfig } from '../../src/config';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'r0');

const staticIpam = { type: 'static', addresses: [{ address: '10.86.0.5/24' }] };
const conf = () => ({ cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, ipam: staticIpam });
const callAs = (command: string, containerId: string, netns: string) =>
  runCni({ command, containerId, netns: netnsPath(netns), ifname: 'net1', config: conf() }, roots);

function expectOk(a: ReturnType<typeof callAs>) {
  expect(a.status, a.stdout + a.stderr).toBe(0);
  return a;
}

/** The one record's `field` namespace as the kernel's reuse leaves it: its inode now that of `other`. */
function giveItsInodeTo(field: 'home' | 'target', other: string): void {
  const [record] = ledgerRecords(roots.stateDir);
  giveRecordedInodeTo(roots.stateDir, record.key, field, netnsPath(other));
}

it("ADD: a lent record whose pod namespace is gone is abandoned, though a newer namespace has that namespace's inode", () => {
  const pod2 = s.netns('pod2');
  const newer = s.netns('newer');
  expectOk(callAs('ADD', `ctrA-${s.prefix}`, pod));
  // the kernel's way with a physical NIC whose namespace dies: back to the initial namespace as devN
  const index = JSON.parse(ip('-j', '-n', pod, 'link', 'show', 'net1'))[0].ifindex;
  ip('-n', pod, 'link', 'set', 'net1', 'netns', '1', 'name', `dev${index}`);
  ip('netns', 'del', pod);
  giveItsInodeTo('target', newer);

  // by inode alone the record's pod would still be alive (the newer namespace), and the NIC held for it: 11
  const add = expectOk(callAs('ADD', `ctrB-${s.prefix}`, pod2));
  expect(add.json.interfaces[0].mac).toBe(nic.mac);
  expect(nicState('net1', pod2)?.mac).toBe(nic.mac);
  expectOk(callAs('DEL', `ctrB-${s.prefix}`, pod2));
  expect(nicState(nic.name)).toEqual(nic);
  expect(ledgerRecords(roots.stateDir)).toEqual([]);
});

it('give-back: a NIC whose home namespace is gone goes to the initial namespace, never into a newer namespace with its inode', async () => {
  const job = s.netns('job');
  const node = s.netns('node');
  const newer = s.netns('newer');
  // the NIC in `job`, its veth peer here, so that it outlives `job`
  const [name] = s.veth('h0', 'h0p');
  ip('link', 'set', name, 'netns', job);
  const session = openSession(loadConfig({}, { stateDir: roots.stateDir, sysfsRoot: roots.sim.root }));
  try {
    const { record } = session.lend({ nic: { name, in: { path: netnsPath(job) } }, target: { path: netnsPath(node) }, owner: { kind: 'attach', target: `test:${s.prefix}` } });
    expect(record.home.initial).toBe(false);
    ip('netns', 'del', job);
    giveItsInodeTo('home', newer);

    const back = await session.giveBack(record.key);
    expect(back.warnings.join('; ')).toContain('no longer exists; returning to the initial namespace');
    expect(nicState(name, newer)).toBeNull();
    expect(nicState(name, node)).toBeNull();
    expect(nicState(name)?.name).toBe(name);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  } finally {
    session.close();
  }
});
