// The kernel-floor baseline (bench/kernel-floor.c): built with the C compiler node-gyp builds the addon with (CC, or
// cc), warnings as errors, into a directory of the bench's; run as one contender of a CNI world's ADD+DEL rounds.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'kernel-floor.c');

/** Builds the program into `dir`; returns its path. */
export function buildKernelFloor(dir) {
  const out = join(dir, 'kernel-floor');
  execFileSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-o', out, SOURCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

/**
 * One ADD+DEL pair's kernel work on the world's NIC with the world's IPAM config (`config`: the sriovctl-cni
 * netconf of bench/cni-world.mjs, its first static address and gateway), through world.call.
 */
export function kernelFloorPair(program, call, config) {
  const [{ address, gateway }] = config.ipam.addresses;
  return () => call([program, config.device, config.ipam.type, address, gateway], config, 'ADD');
}
