// Preflight: everything `up` needs is checked before anything changes, and every shortfall is reported at once
// (one error, one line per problem) instead of failing at the first.
import type { Env } from '../../config';
import { SysError } from '../../errors';
import { findOnPath } from '../tools/run-tool';
import { counted } from '../../util/plural';

/** An SR-IOV PF as preflight sees it. */
export interface PfCandidate {
  /** PCI (or bus) address. */
  address: string;
  /** Its netdev name in our namespace; null when it has none here (lent elsewhere, or no netdev). */
  name: string | null;
  totalVfs: number | null;
  /** Owner of the record that holds it, when it is lent already. */
  lentTo: string | null;
}

export interface PfPlanInput {
  candidates: PfCandidate[];
  /** --pf: names or addresses, used in this order; empty = pick automatically. */
  requested: string[];
  /** --exclude: exact names or addresses (no patterns: 'eth1' never excludes 'eth10'). */
  exclude: string[];
  /** The links that are the host's way out, with the route that makes each one (never lent: it would cut the host off). */
  uplinks: readonly { name: string; route: string }[];
  agents: number;
  vfs: number;
}

export interface PfPlan {
  /** One PF per agent, in agent order. */
  chosen: PfCandidate[];
  problems: string[];
}

/** Why `pf` cannot be lent to a node, or null when it can. */
export function ineligibility(pf: PfCandidate, input: Pick<PfPlanInput, 'exclude' | 'uplinks' | 'vfs'>): string | null {
  const label = pf.name ? `${pf.name} (${pf.address})` : pf.address;
  if (input.exclude.includes(pf.address) || (pf.name !== null && input.exclude.includes(pf.name))) return `${label} is excluded`;
  if (pf.lentTo) return `${label} is lent to ${pf.lentTo}`;
  if (pf.name === null) return `${label} has no network interface in this namespace`;
  const uplink = input.uplinks.find((u) => u.name === pf.name);
  if (uplink) return `${label} is the host's uplink (${uplink.route})`;
  if (pf.totalVfs !== null && pf.totalVfs < input.vfs) return `${label} supports ${counted(pf.totalVfs, 'VF')}, ${input.vfs} asked`;
  return null;
}

/** Picks one PF per agent and says, all at once, everything that stands in the way. */
export function planPfs(input: PfPlanInput): PfPlan {
  const problems: string[] = [];
  const chosen: PfCandidate[] = [];
  if (input.requested.length > 0) {
    for (const want of input.requested) {
      const pf = input.candidates.find((c) => c.address === want || c.name === want);
      if (!pf) {
        problems.push(`--pf ${want}: no SR-IOV PF has that name or address`);
        continue;
      }
      const why = ineligibility(pf, input);
      if (why) problems.push(`--pf ${want}: ${why}`);
      else if (chosen.includes(pf)) problems.push(`--pf ${want}: given twice`);
      else chosen.push(pf);
    }
    if (input.requested.length < input.agents) {
      problems.push(`${counted(input.agents, 'agent')} need ${counted(input.agents, 'PF')} (one each); --pf names ${input.requested.length}`);
    }
    return { chosen: chosen.slice(0, input.agents), problems };
  }

  const reasons: string[] = [];
  for (const pf of [...input.candidates].sort((a, b) => a.address.localeCompare(b.address))) {
    const why = ineligibility(pf, input);
    if (why) reasons.push(why);
    else chosen.push(pf);
  }
  if (chosen.length < input.agents) {
    const detail = reasons.length ? ` (${reasons.join('; ')})` : '';
    problems.push(
      `${counted(input.agents, 'agent')} need ${counted(input.agents, 'SR-IOV PF')} (one each); ${chosen.length} eligible of ${input.candidates.length} found${detail}`,
    );
  }
  return { chosen: chosen.slice(0, input.agents), problems };
}

/** The tools in `tools` that are not on PATH. */
export function missingTools(tools: string[], env: Env): string[] {
  return [...new Set(tools)].filter((t) => findOnPath(t, env) === null).map((t) => `${t} is not installed (not on PATH)`);
}

/** One error listing every problem (`problems`); nothing has changed when it is thrown. */
export class PreflightFailed extends SysError {
  constructor(readonly problems: readonly string[]) {
    super(`preflight failed, nothing was changed:\n${problems.map((p) => `  - ${p}`).join('\n')}`, { code: 'PREFLIGHT', op: 'cluster up preflight' });
  }
}

export function preflightError(problems: string[]): PreflightFailed {
  return new PreflightFailed(problems);
}
