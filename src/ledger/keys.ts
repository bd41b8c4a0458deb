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

/** Throws TypeError unless `key` has the shape recordKeyFor produces (guards every path built from a key). */
export function assertRecordKey(key: string): void {
  if (!isRecordKey(key)) {
    throw new TypeError(`invalid record key ${JSON.stringify(key)} (expected e.g. 'pci-0000_03_00_1' or 'mac-aabbccddeeff')`);
  }
}

export function isRecordKey(key: string): boolean {
  return typeof key === 'string' && key.length <= 200 && KEY_PATTERN.test(key);
}

/** The hex digits of a MAC, or null for none / all zeros (drivers without a permanent MAC report zeros). */
function macHex(mac: string | null): string | null {
  if (!mac) return null;
  const hex = mac.toLowerCase().replace(/[^0-9a-f]/g, '');
  if (!hex || /^0+$/.test(hex)) return null;
  return hex;
}

/**
 * The key of a lend made from the target of record `key` (a VF the host lent to a node, lent on by the node's CNI
 * to a pod): `key` + '_in_' + the hex inode of that namespace. The lends of one NIC form a chain of keys, one
 * per namespace it was lent from, all in one ledger; a key's nested ones are the keys it prefixes (nestedPrefix).
 */
export function nestedKey(key: string, from: { ino: number }): string {
  return `${nestedPrefix(key)}${from.ino.toString(16)}`;
}

export function nestedPrefix(key: string): string {
  return key + NESTED_JOIN;
}

const NESTED_JOIN = '_in_';

/** The NIC's own key a (nested) key starts with: `key` itself when it is not nested. */
export function outermostKey(key: string): string {
  const at = key.indexOf(NESTED_JOIN);
  return at > 0 ? key.slice(0, at) : key;
}
