// The two roots every part of sriovctl shares; tests point both at temporary trees.

/** Where the ledger and every other durable file live. */
export function stateDir(): string {
  return process.env.SRIOVCTL_STATE_DIR || '/var/lib/sriovctl';
}

/** The sysfs root (a fake tree in tests and in the simulated lab). */
export function sysfsRoot(): string {
  return process.env.SRIOVCTL_SYSFS_ROOT || '/sys';
}
