// One rtnetlink socket per namespace per process: an ADD and a DEL run in-process here, and the addon's socket
// counter says how many sockets each opened — the engine's session keeps one handle per namespace and the
// front door uses the same ones (before the lend session, one ADD opened five).
import { describe, expect, it } from 'vitest';
import { cmdAdd } from '../../src/cni/cmd-add';
import { cmdDel } from '../../src/cni/cmd-del';
import { parseEnv } from '../../src/cni/env';
import { parseNetConf } from '../../src/cni/netconf';
import type { VerbContext } from '../../src/cni/verb';
import { rtnlSocketsOpened } from '../../src/net';
import { ledgerRecords, netnsPath, type CniRoots } from '../helpers/cni-run';
import { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { useCniPodWorld } from '../helpers/cni-world';
import { loadConfig } from '../../src/config';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;

useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'n0', { bundle: false });

function call(command: 'ADD' | 'DEL'): VerbContext {
  const env = parseEnv({
    CNI_COMMAND: command,
    CNI_CONTAINERID: `ctr-${s.prefix}`,
    CNI_NETNS: netnsPath(pod),
    CNI_IFNAME: 'net1',
    CNI_PATH: '/usr/lib/cni',
  });
  const raw = {
    cniVersion: '1.1.0',
    name: `net-${s.prefix}`,
    type: 'sriovctl-cni',
    device: nic.name,
    // no IPAM: its plugin is another process (and reads this one's environment)
  };
  return { env, conf: parseNetConf(raw), config: loadConfig({}, { stateDir: roots.stateDir, sysfsRoot: roots.sim.root }) };
}

/** Sockets opened while `fn` ran. */
async function socketsDuring(fn: () => unknown): Promise<number> {
  const before = rtnlSocketsOpened();
  await fn();
  return rtnlSocketsOpened() - before;
}

describe('rtnetlink sockets of one CNI call', () => {
  it('an ADD and a DEL each open at most one per namespace they touch (ours and the pod)', async () => {
    const add = await socketsDuring(() => cmdAdd(call('ADD')));
    expect(nicState('net1', pod)).not.toBeNull();
    expect(ledgerRecords(roots.stateDir)).toHaveLength(1);
    expect(add).toBeLessThanOrEqual(2);

    const del = await socketsDuring(() => cmdDel(call('DEL')));
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toHaveLength(0);
    expect(del).toBeLessThanOrEqual(2);
  });
});
