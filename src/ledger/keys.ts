// Record keys: one per NIC, stable across renames and moves, and safe as a file name.

/** The parts of a NIC's identity a key is derived from (a subset of NicIdentity). */
export interface KeySource {
  pciAddress: string | null;
  permMac: string | null;
  mac: string | null;
  name: string;
}

/** What every key looks like: '<kind>-<lower-case alphanumerics and _>'; no '/', no '.', so it is a safe file name. */
const KEY_PATTERN = /^[a-z]+-[a-z0-9_]+$/;

/**
 * 'pci-0000_03_00_1' when the NIC has a bus address, else 'mac-aabbccddeeff' from the permanent MAC, else the MAC.
 * A name is never a key: names change on every move.
 */
export function recordKeyFor(identity: KeySource): string {
  const pci = identity.pciAddress?.trim();
  if (pci) return 'pci-' + pci.toLowerCase().replace(/[^a-z0-9]/g, '_');
  for (const mac of [identity.permMac, identity.mac]) {
    const hex = macHex(mac);
    if (hex) return 'mac-' + hex;
  }
  throw new TypeError(
    `cannot derive a record key for NIC '${identity.name}': it has no PCI address, permanent MAC or MAC`,
  );
}

/**
 * The key of a NIC lent to a cluster node: its own key with a 'node' prefix ('nodepci-0000_03_00_1'). A node lends
 * its NICs on (the plugin inside it gives a VF to a pod, which records the NIC under its own key), so a NIC can have
 * two records at once — the node's and the pod's — each given back by its own owner, the pod's first.
 */
export function nodeRecordKey(key: string): string {
  return `node${key}`;
}

/** Whether `key` is a cluster node's (see nodeRecordKey). */
export function isNodeRecordKey(key: string): boolean {
  return key.startsWith('nodepci-') || key.startsWith('nodemac-');
}

/** Throws TypeError unless `key` has the shape recordKeyFor produces (guards every path built from a key). */
export function assertRecordKey(key: string): void {
  if (typeof key !== 'string' || key.length > 200 || !KEY_PATTERN.test(key)) {
    throw new TypeError(`invalid record key ${JSON.stringify(key)} (expected e.g. 'pci-0000_03_00_1' or 'mac-aabbccddeeff')`);
  }
}

/** The hex digits of a MAC, or null for none / all zeros (drivers without a permanent MAC report zeros). */
function macHex(mac: string | null): string | null {
  if (!mac) return null;
  const hex = mac.toLowerCase().replace(/[^0-9a-f]/g, '');
  if (!hex || /^0+$/.test(hex)) return null;
  return hex;
}
