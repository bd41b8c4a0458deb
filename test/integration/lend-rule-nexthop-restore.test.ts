// Putting rules and nexthops back from a snapshot (src/lend/rule-nexthop-*.ts) in real namespaces: idempotent, a rule
// gone meanwhile is added again, and what cannot be put back is a warning naming it while the rest is restored.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Rtnl } from '../../src/net';
import { ruleNexthopSnapshotOf } from '../../src/lend/rule-nexthop-snapshot';
import { restoreNexthops as restoreNexthopSteps, restoreRules as restoreRuleSteps } from '../../src/lend/rule-nexthop-restore';
import { runWaitsSync } from '../../src/util/wait';
import { Scratch, ip, ipJson } from '../helpers/kernel';

const restoreNexthops = (...args: Parameters<typeof restoreNexthopSteps>) => runWaitsSync(restoreNexthopSteps(...args));
const restoreRules = (...args: Parameters<typeof restoreRuleSteps>) => runWaitsSync(restoreRuleSteps(...args));

let scratch: Scratch;
let home: string;
let rtnl: Rtnl;
let nic: string;
let other: string;

beforeEach(() => {
  scratch = new Scratch();
  ({ name: home, rtnl } = scratch.netnsWithRtnl('rr'));
  const [n, np] = scratch.veth('n', 'np', home);
  const [o, op] = scratch.veth('o', 'op', home);
  nic = n;
  other = o;
  for (const c of [
    `link set ${np} up`, `link set ${op} up`, `link set ${nic} up`, `link set ${other} up`,
    `addr add 192.0.2.10/24 dev ${nic}`, `addr add 198.51.100.1/24 dev ${other}`,
    `rule add iif ${nic} table 100 pref 1000`, `rule add oif ${nic} oif ${nic} table 101 pref 1001`,
    `nexthop add id 10 via 192.0.2.1 dev ${nic}`, `nexthop add id 11 via 198.51.100.2 dev ${other}`, `nexthop add id 12 dev ${nic}`,
    `nexthop add id 20 group 10,3/11,5`, `nexthop add id 21 group 12`,
  ]) {
    ip('-n', home, ...c.split(' '));
  }
});
afterEach(() => scratch.cleanup());

const nexthopIds = () => ipJson<any[]>('-n', home, 'nexthop', 'show').map((n) => n.id);
const nicIndex = () => rtnl.getLink({ name: nic }).index;
const snapshot = () => runWaitsSync(ruleNexthopSnapshotOf(rtnl, rtnl.getLink({ name: nic })));

/** The NIC out to another namespace and back (down, as a move leaves it: set up again). */
function awayAndBack(between: () => void = () => {}, backAs = nic): void {
  const away = scratch.netns('ra');
  ip('-n', home, 'link', 'set', nic, 'netns', away);
  between();
  ip('-n', away, 'link', 'set', nic, 'netns', home, 'name', backAs);
  ip('-n', home, 'link', 'set', backAs, 'up');
  // as the give-back puts the addresses back before the nexthops (their gateways must be reachable)
  ip('-n', home, 'addr', 'add', '192.0.2.10/24', 'dev', backAs);
}

describe('restoring rules and nexthops', () => {
  it('records the NIC\'s nexthops and the groups holding them, and puts them back once (a second run changes nothing)', () => {
    const snap = snapshot();
    expect(snap.nexthops.map((n) => `${n.kind}:${n.id}`)).toEqual(['nexthop:10', 'nexthop:12', 'group:20', 'group:21']);
    expect(snap.rules.map((r) => r.priority)).toEqual([1000, 1001]);
    const before = ipJson<any[]>('-n', home, 'nexthop', 'show');
    awayAndBack();
    expect(nexthopIds()).toEqual([11, 20]);
    const warnings: string[] = [];
    expect(restoreNexthops(rtnl, nicIndex(), snap.nexthops, warnings)).toBe(true);
    expect(restoreRules(rtnl, { index: nicIndex(), recordedNames: [nic] }, snap.rules, warnings)).toBe(false);
    expect(warnings).toEqual([]);
    expect(ipJson<any[]>('-n', home, 'nexthop', 'show')).toEqual(before);
    expect(restoreNexthops(rtnl, nicIndex(), snap.nexthops, warnings)).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('adds a rule that is gone, and keeps a group member added while the NIC was away', () => {
    const snap = snapshot();
    awayAndBack(() => {
      ip('-n', home, 'rule', 'del', 'pref', '1000');
      ip('-n', home, 'nexthop', 'add', 'id', '13', 'via', '198.51.100.3', 'dev', other);
      ip('-n', home, 'nexthop', 'replace', 'id', '20', 'group', '11,5/13');
    });
    const warnings: string[] = [];
    restoreNexthops(rtnl, nicIndex(), snap.nexthops, warnings);
    expect(restoreRules(rtnl, { index: nicIndex(), recordedNames: [nic] }, snap.rules, warnings)).toBe(true);
    expect(warnings).toEqual([]);
    expect(ipJson<any[]>('-n', home, 'rule', 'show', 'pref', '1000')).toEqual([expect.objectContaining({ iif: nic, table: '100' })]);
    expect(ipJson<any[]>('-n', home, 'nexthop', 'show', 'id', '20')[0].group).toEqual([{ id: 10, weight: 3 }, { id: 11, weight: 5 }, { id: 13 }]);
  });

  it('attaches again a rule naming the NIC by an altname, which the kernel leaves detached', () => {
    ip('-n', home, 'link', 'property', 'add', 'dev', nic, 'altname', `${nic}-alt`);
    ip('-n', home, 'rule', 'add', 'iif', `${nic}-alt`, 'table', '102', 'pref', '1002');
    const snap = snapshot();
    expect(snap.rules.map((r) => r.priority)).toEqual([1000, 1001, 1002]);
    awayAndBack();
    expect(ip('-n', home, 'rule', 'show', 'pref', '1002')).toContain('[detached]');
    const warnings: string[] = [];
    expect(restoreRules(rtnl, { index: nicIndex(), recordedNames: [nic, `${nic}-alt`] }, snap.rules, warnings)).toBe(true);
    expect(warnings).toEqual([]);
    expect(ip('-n', home, 'rule', 'show', 'pref', '1002')).not.toContain('[detached]');
    expect(ipJson<any[]>('-n', home, 'rule', 'show', 'pref', '1002')).toEqual([expect.objectContaining({ iif: `${nic}-alt`, table: '102' })]);
  });

  it('names what it cannot put back and restores the rest', () => {
    const snap = snapshot();
    awayAndBack(() => {
      // another nexthop takes id 10 while the NIC is away
      ip('-n', home, 'nexthop', 'add', 'id', '10', 'via', '198.51.100.9', 'dev', other);
    }, `${nic}x`);
    const warnings: string[] = [];
    restoreNexthops(rtnl, rtnl.getLink({ name: `${nic}x` }).index, snap.nexthops, warnings);
    restoreRules(rtnl, { index: rtnl.getLink({ name: `${nic}x` }).index, recordedNames: [nic] }, snap.rules, warnings);
    expect(warnings).toEqual([
      'nexthop 10 (via 192.0.2.1): id 10 is now another nexthop\'s; not restored',
      'nexthop group 20 (10,3/11,5): member 10 is gone; left out',
      `rule 1000 (iif ${nic} table 100): no device named ${nic} is here (the NIC is back as ${nic}x); the rule stays detached until one is`,
      `rule 1001 (oif ${nic} table 101): no device named ${nic} is here (the NIC is back as ${nic}x); the rule stays detached until one is`,
    ]);
    // the rest is back: 12 on the NIC, group 21 of it, group 20 with what it still has
    expect(ipJson<any[]>('-n', home, 'nexthop', 'show', 'id', '12')[0]).toMatchObject({ dev: `${nic}x` });
    expect(ipJson<any[]>('-n', home, 'nexthop', 'show', 'id', '21')[0].group).toEqual([{ id: 12 }]);
    expect(ipJson<any[]>('-n', home, 'nexthop', 'show', 'id', '20')[0].group).toEqual([{ id: 11, weight: 5 }]);
  });
});
