// Crash safety, table-driven over every step the engine has: a process SIGKILLed (or failing) right after any
// step's kernel action, then await recover(), must leave the NIC home and intact. A new step without a row here fails
// the "covers every step" test.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findRecords, GIVE_BACK_STEPS, LEND_STEPS, recover } from '../helpers/engine';
import { nicState, runChild, standInNic, useLendScratch, type NicState } from '../helpers/lend-fixture';

const space = useLendScratch();
const env = space.env;

/** The lend every row makes: renamed, reconfigured, with an altname the move must drop. */
function setup() {
  const s = space.scratch();
  const pod = s.netns('pod');
  const nic = standInNic(s, 'k0');
  const alt = s.prefix + 'net1';
  execFileSync('ip', ['link', 'property', 'add', 'dev', nic.name, 'altname', alt]);
  const before = nicState(nic.name)!;
  const request = {
    nic: { name: nic.name },
    target: { path: `/var/run/netns/${pod}` },
    owner: { kind: 'attach', target: 'test:crash' },
    name: alt,
    mtu: 1280,
    mac: '02:00:00:00:00:42',
  };
  return { pod, before, request };
}

/** After a SIGKILL mid-operation: one record is left, and await recover() puts the NIC home exactly as it was. */
async function expectKilledThenRecovered(run: { signal: string | null }, before: NicState, pod: string, targetName: string) {
  expect(run.signal).toBe('SIGKILL');
  expect(findRecords()).toHaveLength(1);
  const report = await recover();
  expect(report.failures).toEqual([]);
  expect(nicState(before.name)).toEqual(before);
  expect(nicState(targetName, pod)).toBeNull();
  expect(findRecords()).toHaveLength(0);
}

describe('crash at every step, then await recover()', () => {
  it('covers every step of lend and give-back', () => {
    expect(LEND_STEPS.length).toBeGreaterThanOrEqual(5);
    expect(GIVE_BACK_STEPS.length).toBeGreaterThanOrEqual(4);
  });

  for (const step of LEND_STEPS) {
    it(`lend killed at ${step}`, async () => {
      const { pod, before, request } = setup();
      const run = await runChild({ op: 'lend', request }, { ...env(), SRIOVCTL_FAILPOINT: step });
      await expectKilledThenRecovered(run, before, pod, request.name);
    });

    it(`lend failing at ${step} rolls back at once`, async () => {
      const { before, request } = setup();
      const run = await runChild({ op: 'lend', request }, { ...env(), SRIOVCTL_FAILPOINT: `${step}:error` });
      expect(run.parsed).toMatchObject({ ok: false, code: 'FAILPOINT' });
      expect(nicState(before.name)).toEqual(before);
      expect(findRecords()).toHaveLength(0);
    });
  }

  for (const step of GIVE_BACK_STEPS) {
    it(`give-back killed at ${step}`, async () => {
      const { pod, before, request } = setup();
      const lent = await runChild({ op: 'lend', request }, env());
      expect(lent.parsed).toMatchObject({ ok: true });
      const key = lent.parsed.result as string;
      const run = await runChild({ op: 'giveBack', key }, { ...env(), SRIOVCTL_FAILPOINT: step });
      await expectKilledThenRecovered(run, before, pod, request.name);
    });
  }
});
