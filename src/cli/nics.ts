// `<nic>` on the command line → which NIC the lending engine should take: a PCI address (wherever the NIC
// is now) or an interface name in the caller's namespace.
import type { NicRef } from '../lend';
import { assertIfName } from '../net';
import { isBdf } from '../sriov';
import { usageError } from './exit-codes';

// lspci's short form (03:00.1) leaves out domain 0000.
const SHORT_PCI_ADDRESS = /^[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i;

/** The canonical 'dddd:bb:dd.f' form of a PCI address (full or lspci-short, any case), or null. */
export function parsePciAddress(text: string): string | null {
  const full = (SHORT_PCI_ADDRESS.test(text) ? `0000:${text}` : text).toLowerCase();
  return isBdf(full) ? full : null;
}

export function resolveNic(text: string): NicRef {
  const pci = parsePciAddress(text);
  if (pci) return { pci };
  try {
    assertIfName(text);
  } catch (err) {
    throw usageError(`nic ${JSON.stringify(text)}: not an interface name or a PCI address (${(err as Error).message})`);
  }
  return { name: text };
}
