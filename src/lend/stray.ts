// Returning an SR-IOV NIC nobody recorded (found in a foreign namespace by cleanup) to the initial namespace.
import { SysError } from '../errors';
import { deleteRecord, lockNic, newRecord, readRecord, recordKeyFor, writeRecord } from '../ledger';
import { initialRef, openSpec, refWithCookie } from './namespaces';
import { identityOfLink } from './nic';
import { ownerKey } from '../ledger/owner';
import { restoreFromRecord } from './restore';
import type { EngineContext } from './context';
import type { GiveBackResult, NamespaceSpec } from './types';

export interface StrayNic {
  /** Where it is now. */
  in: NamespaceSpec;
  /** Its current name there. */
  name: string;
  /** Its PCI address, when known (the record key is derived from it). */
  pciAddress: string | null;
  /** The name it should have at home (from sysfs or an old record); default: its current name. */
  originalName?: string;
}

/**
 * Return an SR-IOV NIC the ledger does not know (found in a foreign namespace by cleanup) to the initial
 * namespace. A record is written first, like every move, so a crash here is finished by the next recover().
 */
export function returnStray(s: EngineContext, stray: StrayNic): GiveBackResult {
  const ledger = s.ledger;
  const where = openSpec(stray.in);
  const rtnl = s.rtnl(where);
  try {
    const link = rtnl.getLink({ name: stray.name });
    const identity = identityOfLink(link, stray.pciAddress);
    const key = recordKeyFor(identity);
    const lock = lockNic(ledger, key, { timeoutMs: 2000 });
    try {
      if (readRecord(ledger, key)) {
        throw new SysError(`${stray.name} has a record: give it back by its record`, { code: 'BUSY', op: 'return stray' });
      }
      const record = newRecord(
        {
          key,
          owner: ownerKey({ kind: 'stray' }),
          identity,
          home: initialRef(),
          snapshot: {
          name: stray.originalName ?? link.name,
          mac: link.mac,
          mtu: link.mtu,
          up: link.up,
          alias: link.alias,
          altnames: link.altnames,
          vf: null,
          },
          target: refWithCookie(where, rtnl),
          targetName: link.name,
          targetIfindex: link.index,
          moved: true,
          requested: { up: link.up },
          phase: 'returning',
          meta: {},
        },
        'return:started',
        'stray found by cleanup',
      );
      writeRecord(ledger, record);
      // moved out of the namespace the caller opened (cleanup's scan, which checked it), not whatever its path names now
      const result = s.throughHandle(where, () => restoreFromRecord(s, record));
      deleteRecord(ledger, key, { durable: false });
      return { key, owner: null, ...result };
    } finally {
      lock.release();
    }
  } finally {
    where.close();
  }
}
