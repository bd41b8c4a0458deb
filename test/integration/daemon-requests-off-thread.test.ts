// The daemon serves every pod of a node on one thread, and each rtnetlink request waits for RTNL while any namespace
// move on the machine holds it (10–30 ms): a request made on that thread would hold up every other call with it. So
// a CNI ADD and DEL as the daemon runs them (runRequest, in this process) make every rtnetlink request of the lend,
// the pod's configuration and the give-back as a slow call on the addon's threads, none on the calling thread.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { DEBIAN_CNI, netnsPath, ROOT } from '../helpers/cni-run';
import { deviceConf, useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import { nicState } from '../helpers/lend-fixture';

// the build (dist/), as the daemon runs it: the verbs are loaded on demand with require, and the spies must sit on
// the connections that very code makes
/* eslint-disable @typescript-eslint/no-require-imports */
const { runRequest } = require(join(ROOT, 'dist', 'daemon', 'run-request.js')) as typeof import('../../src/daemon/run-request');
const { RequestKind, StdinState } = require(join(ROOT, 'dist', 'daemon', 'wire.js')) as typeof import('../../src/daemon/wire');
const { connect } = require(join(ROOT, 'dist', 'net', 'index.js')) as typeof import('../../src/net');
const { lateCarrierAnnouncements, carrierWatches } = require(join(ROOT, 'dist', 'cni', 'late-carrier.js')) as typeof import('../../src/cni/late-carrier');
const { serveOthersWhileWaiting } = require(join(ROOT, 'dist', 'util', 'wait.js')) as typeof import('../../src/util/wait');
/* eslint-enable @typescript-eslint/no-require-imports */

let w: CniPodWorld;
useCniPodWorld((x) => (w = x), 'rq', { bundle: false });

/** The synchronous operations of an rtnetlink connection (all but close and netnsCookie, which waits for nothing). */
function syncRequestSpies(): Map<string, MockInstance> {
  const probe = connect();
  const proto = Object.getPrototypeOf(probe) as Record<string, unknown>;
  probe.close();
  // methods only (their descriptors' values): reading the \`steps\` getter off the prototype would run it there
  const names = Object.getOwnPropertyNames(proto).filter((n) => typeof Object.getOwnPropertyDescriptor(proto, n)?.value === 'function' && !['constructor', 'close', 'netnsCookie', 'startMoveLink'].includes(n));
  expect(names).toEqual(expect.arrayContaining(['getLink', 'findLink', 'listLinks', 'setLink', 'addAddress', 'listRoutes', 'driverInfo']));
  return new Map(names.map((n) => [n, vi.spyOn(proto as Record<string, () => unknown>, n)]));
}

const called = (spies: Map<string, MockInstance>) => [...spies].filter(([, s]) => s.mock.calls.length > 0).map(([n, s]) => `${n} ×${s.mock.calls.length}`);

function cniRequest(command: 'ADD' | 'DEL', config: object) {
  return runRequest({
    kind: RequestKind.cni,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      SRIOVCTL_STATE_DIR: w.roots.stateDir,
      SRIOVCTL_SYSFS_ROOT: w.roots.sim.root,
      CNI_COMMAND: command,
      CNI_CONTAINERID: `c-${w.s.prefix}`,
      CNI_NETNS: netnsPath(w.pod),
      CNI_IFNAME: 'net1',
      CNI_PATH: DEBIAN_CNI,
    },
    stdinState: StdinState.read,
    stdin: JSON.stringify(config),
  });
}

// as the daemon runs ADD: its steps' requests off the thread, the answer before the carrier comes and a watch for it
// (the stand-in's peer has none)
beforeEach(() => {
  serveOthersWhileWaiting(true);
  lateCarrierAnnouncements(() => {});
});
afterEach(() => {
  lateCarrierAnnouncements(null);
  serveOthersWhileWaiting(false);
  vi.restoreAllMocks();
});

describe('the daemon makes no rtnetlink request on its thread', () => {
  it('an ADD (lend, IPAM, the pod address and route, the carrier watch) and its DEL: every request a slow call', async () => {
    const config = deviceConf(w.s, w.nic, { type: 'static', addresses: [{ address: '10.250.7.2/24', gateway: '10.250.7.1' }], routes: [{ dst: '10.251.0.0/16' }] });
    const spies = syncRequestSpies();
    const added = await cniRequest('ADD', config);
    expect(added.exitCode, added.stdout + added.stderr).toBe(0);
    expect(JSON.parse(added.stdout).ips[0].address).toBe('10.250.7.2/24');
    expect(nicState('net1', w.pod)).not.toBeNull();
    expect(carrierWatches()).toBe(1);
    // the watch looks for the carrier off the thread too
    await new Promise((r) => setTimeout(r, 300));
    expect(called(spies)).toEqual([]);

    const deleted = await cniRequest('DEL', config);
    expect(deleted.exitCode, deleted.stdout + deleted.stderr).toBe(0);
    expect(nicState(w.nic.name)).toEqual(w.nic);
    expect(called(spies)).toEqual([]);
  }, 60_000);
});
