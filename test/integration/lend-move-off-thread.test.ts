// Where the engine runs with waits asleep (the daemon, serveOthersWhileWaiting: commitHeld, giveBack), the namespace
// moves are made off the JS thread: the event loop turns while the kernel moves the NIC (an RCU barrier, 10-30 ms), so
// other calls go on. Everything else stays as the synchronous path has it: the record before the move, the lock held,
// the NIC home. A process that serves nobody else (the one-shot plugin, the CLI) makes them in place.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveOthersWhileWaiting } from '../../src/util/wait';
import { loadConfig } from '../../src/config';
import { isRefusal, openSession } from '../../src/lend';
import { readRecord } from '../../src/ledger';
import { nicState, standInNic, useLendScratch } from '../helpers/lend-fixture';

const space = useLendScratch();

/** `run()`, and whether the event loop reached its check phase (a setImmediate queued first) before it settled. */
async function loopTurnedDuring<T>(run: () => Promise<T>): Promise<{ value: T; turned: boolean }> {
  let turned = false;
  setImmediate(() => (turned = true));
  const value = await run();
  return { value, turned };
}

describe('moves off the thread', () => {
  beforeEach(() => serveOthersWhileWaiting(true));
  afterEach(() => serveOthersWhileWaiting(false));

  it('a lend through commitHeld and its give-back leave the event loop running while the NIC moves', async () => {
    const s = space.scratch();
    const pod = s.netns('pod');
    const nic = standInNic(s, 'm0');
    const session = openSession(loadConfig(space.env()));
    try {
      const plan = await session.readOnly(() =>
        session.prepare({ nic: { name: nic.name }, target: { path: `/var/run/netns/${pod}` }, owner: { kind: 'attach', target: 'test:moves' }, name: 'net1' }),
      );
      if (isRefusal(plan)) throw plan.error;
      const lent = await loopTurnedDuring(() => session.commitHeld(plan, {}));
      expect(lent.turned).toBe(true);
      // the record was written before the move and is there, 'lending', until sealed
      expect(readRecord(session.ledger, plan.key)?.phase).toBe('lending');
      const sealed = lent.value.seal();
      expect(sealed.record.phase).toBe('lent');
      expect(nicState('net1', pod)).not.toBeNull();
      expect(nicState(nic.name)).toBeNull();

      const back = await loopTurnedDuring(() => session.giveBack(plan.key));
      expect(back.turned).toBe(true);
      expect(back.value.outcome).toBe('returned');
      expect(nicState(nic.name)).toEqual(nic);
      expect(readRecord(session.ledger, plan.key)).toBeNull();
    } finally {
      session.close();
    }
  }, 60_000);
});
