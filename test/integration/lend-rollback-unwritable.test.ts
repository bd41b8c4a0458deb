// A lend that fails once the NIC has moved, while its ledger can no longer be written (the state dir's filesystem
// died, or went read-only, between the record's first write and the rollback's): the NIC must still come home.
// The rollback's own record write is made to fail; everything else is the real engine on real namespaces.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';
import { nicState, standInNic, useLendScratch } from '../helpers/lend-fixture';

let failRollbackWrite = false;

vi.mock('../../src/ledger', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/ledger')>();
  return {
    ...actual,
    advanceRecord: (...args: Parameters<typeof actual.advanceRecord>) => {
      if (failRollbackWrite && args[2] === 'rollback:started') {
        throw Object.assign(new Error('EROFS: read-only file system, open (planted)'), { code: 'EROFS' });
      }
      return actual.advanceRecord(...args);
    },
  };
});

const space = useLendScratch();
const saved = { ...process.env };

afterEach(() => {
  failRollbackWrite = false;
  for (const name of ['SRIOVCTL_STATE_DIR', 'SRIOVCTL_SYSFS_ROOT', 'SRIOVCTL_FAILPOINT']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('a failed lend whose rollback cannot write the ledger', () => {
  it('brings the NIC home all the same and says the record may be left', () => {
    const s = space.scratch();
    const pod = s.netns('pod');
    const nic = standInNic(s, 'k0');
    const before = nicState(nic.name)!;
    // the failpoint is the configuration's, as a front door reads it (SRIOVCTL_FAILPOINT)
    const session = openSession(loadConfig({ ...space.env(), SRIOVCTL_FAILPOINT: 'lend:moved:error' }));
    failRollbackWrite = true;

    let thrown: unknown = null;
    try {
      session.lend({
        nic: { name: nic.name },
        target: { path: `/var/run/netns/${pod}` },
        owner: { kind: 'attach', target: 'test:rollback-unwritable' },
        name: s.prefix + 'net1',
        mtu: 1280,
      });
    } catch (err) {
      thrown = err;
    } finally {
      session.close();
    }
    expect(String(thrown)).toMatch(/failpoint lend:moved/);
    expect(nicState(s.prefix + 'net1', pod)).toBeNull();
    expect(nicState(before.name)).toEqual(before);
  });
});
