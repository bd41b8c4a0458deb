// The kernel-floor baseline (bench/kernel-floor.c): built with the C compiler node-gyp builds the addon with (CC, or
// cc), warnings as errors, into a directory of the bench's; run as one contender of a CNI world's ADD+DEL rounds.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './bench-helpers.mjs';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'kernel-floor.c');

/** Builds the program into `dir`; returns its path. */
export function buildKernelFloor(dir) {
  const out = join(dir, 'kernel-floor');
  execFileSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-o', out, SOURCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

/**
 * One ADD+DEL pair's kernel work on the world's NIC with the world's IPAM config (`config`: the sriovctl-cni
 * netconf of bench/cni-world.mjs, its first static address and gateway), through world.call. Each call's moves are
 * kept in `pair.moves` ({ into: ms[], back: ms[] }, as the program timed them).
 */
export function kernelFloorPair(program, call, config) {
  const [{ address, gateway }] = config.ipam.addresses;
  const moves = { into: [], back: [] };
  const pair = () => {
    const r = call([program, config.device, config.ipam.type, address, gateway], config, 'ADD');
    for (const [, which, ms] of r.stdout.matchAll(/^move (into|back) (\d+(?:\.\d+)?)$/gm)) moves[which].push(Number(ms));
  };
  return Object.assign(pair, { moves });
}

/** 'into the pod 12.2 / 20.1 / 52.1 ms (of 102), back 13.9 / 21.9 / 34.2 ms (of 102) (min / median / max)'. */
export function describeMoves(moves) {
  const of = (ms) => {
    if (ms.length === 0) return 'none timed';
    const sorted = [...ms].sort((a, b) => a - b);
    return `${sorted[0].toFixed(1)} / ${median(sorted).toFixed(1)} / ${sorted.at(-1).toFixed(1)} ms (of ${ms.length})`;
  };
  return `into the pod ${of(moves.into)}, back ${of(moves.back)} (min / median / max)`;
}
