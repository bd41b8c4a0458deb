// attach and detach SIGKILLed at seeded random moments with the NIC loaded with L3 state, then recovered by the front door's
// own means: zero differences in the state diff, an empty ledger (test/helpers/l3-kill-rounds.ts). The seed is
// printed; SRIOVCTL_KILL_SEED replays it.
import { describe, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { killRounds, ROUNDS_PER_DOOR, type Door } from '../helpers/l3-kill-rounds';

describe('a NIC with L3 state, its front door SIGKILLed at a random moment, then recovered', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  it.each<Door>(['attach', 'detach'])(`%s: zero differences over ${ROUNDS_PER_DOOR} kills`, async (door) => {
    // eslint-disable-next-line no-console
    console.log(await killRounds(w, door));
  }, 180_000);
});
