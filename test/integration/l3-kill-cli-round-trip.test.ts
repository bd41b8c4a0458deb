// attach and detach SIGKILLed at seeded random moments with the NIC loaded with L3 state, then recovered by the front door's
// own means: zero differences in the state diff, an empty ledger (test/helpers/l3-kill-rounds.ts). The seed is
// printed; SRIOVCTL_KILL_SEED replays it.
import { describeKillRounds } from '../helpers/l3-kill-rounds';

describeKillRounds(['attach', 'detach']);
