// `--vfio-wait <seconds>` of every command that gives NICs back (detach, cleanup, cluster down): how long putting a
// PF's VF count back waits for a process holding one of its VFs through VFIO (a VM, a DPDK app) to let go. Past it,
// the holder is named, the PF goes home without its old count and its record is kept for a later cleanup.
import { InvalidArgumentError, Option } from 'commander';
import { DEFAULT_VFIO_HOLDER_WAIT_MS, MAX_VFIO_HOLDER_WAIT_MS } from '../lend';
import type { SetNumVfsOptions } from '../sriov';

const MAX_SECONDS = MAX_VFIO_HOLDER_WAIT_MS / 1000;

/** 0 (do not wait) up to MAX_SECONDS, fractions allowed. */
export function parseVfioWait(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n <= MAX_SECONDS)) {
    throw new InvalidArgumentError(`not a number of seconds from 0 to ${MAX_SECONDS}: ${JSON.stringify(value)}`);
  }
  return n;
}

export function vfioWaitOption(): Option {
  return new Option(
    '--vfio-wait <seconds>',
    `how long a VF count reset waits for a process holding a VF through VFIO to let go (0-${MAX_SECONDS}; default ${DEFAULT_VFIO_HOLDER_WAIT_MS / 1000}); past it the count is left, with its record, for a later cleanup`,
  ).argParser(parseVfioWait);
}

/** The option's value (seconds, or absent) as the engine's bound. */
export function vfioWaitMs(seconds: number | undefined): number {
  return seconds === undefined ? DEFAULT_VFIO_HOLDER_WAIT_MS : Math.round(seconds * 1000);
}

/** Bounds for putting a VF count back, from the option's value. */
export function vfCountBoundsOf(seconds: number | undefined): SetNumVfsOptions {
  return { holderWaitMs: vfioWaitMs(seconds) };
}
