// The seeded plan of a churn run: for each pod cycle, whether a node component is SIGKILLed during it, which, and
// at which moment of the cycle. The same seed and cycle count give the same plan (the moments' timing against
// what the node is doing still varies from run to run).
import { prng } from '../helpers/hostile-inputs';

/** What a churn run can kill (`multus`: thick Multus's daemon, only in that mode). */
export type KillTarget = 'kubelet' | 'containerd' | 'sriovctl-daemon' | 'multus';
/** When in its cycle: right after the pod's creation (its sandbox's ADD under way) or after its deletion (its DEL). */
export type KillMoment = 'add' | 'del';

export interface PlannedKill {
  cycle: number;
  target: KillTarget;
  moment: KillMoment;
}

/**
 * About one cycle in `every` gets a kill (every target at least once, in turns from a seeded start), at seeded
 * cycles and moments; no cycle gets two.
 */
export function churnPlan(seed: number, cycles: number, targets: readonly KillTarget[], every = 8): PlannedKill[] {
  const random = prng(seed);
  const count = Math.min(cycles, Math.max(targets.length, Math.round(cycles / every)));
  const free = Array.from({ length: cycles }, (_, i) => i);
  const first = Math.floor(random() * targets.length);
  const plan: PlannedKill[] = [];
  for (let i = 0; i < count; i++) {
    const [cycle] = free.splice(Math.floor(random() * free.length), 1);
    plan.push({ cycle, target: targets[(first + i) % targets.length], moment: random() < 0.5 ? 'add' : 'del' });
  }
  return plan.sort((a, b) => a.cycle - b.cycle);
}

/** The run's cycle count and seed: from SRIOVCTL_K8S_CHURN_CYCLES and SRIOVCTL_K8S_CHURN_SEED, else `cycles` and a new seed. */
export function churnSettings(cycles: number): { cycles: number; seed: number } {
  const env = process.env;
  return {
    cycles: env.SRIOVCTL_K8S_CHURN_CYCLES ? Number(env.SRIOVCTL_K8S_CHURN_CYCLES) : cycles,
    seed: env.SRIOVCTL_K8S_CHURN_SEED ? Number(env.SRIOVCTL_K8S_CHURN_SEED) : Math.floor(Math.random() * 2 ** 31),
  };
}
