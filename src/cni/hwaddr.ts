// host-device's `hwaddr`: a link-layer address as Go's net.ParseMAC reads it — 6 bytes (Ethernet), 8 (EUI-64)
// or 20 (IP over InfiniBand), written with ':' or '-' between bytes or '.' between groups of four hex digits.
// It selects a NIC, it is never assigned, so multicast or all-zero addresses are not refused here.
import { invalidConfig } from './errors';

const LENGTHS = new Set([6, 8, 20]);

/** Lower-case, colon-separated (the form src/net reports links' addresses in). */
export function parseHardwareAddr(v: string, path: string): string {
  const bytes = hwBytes(v);
  if (!bytes || !LENGTHS.has(bytes.length)) {
    throw invalidConfig(path, `${JSON.stringify(v)} is not a hardware address (6, 8 or 20 bytes, e.g. aa:bb:cc:dd:ee:ff)`);
  }
  return bytes.join(':');
}

function hwBytes(v: string): string[] | null {
  if (/^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2})*$/.test(v)) return v.toLowerCase().split(/[:-]/);
  if (/^[0-9a-fA-F]{4}(\.[0-9a-fA-F]{4})+$/.test(v)) return v.toLowerCase().replace(/\./g, '').match(/../g);
  return null;
}
