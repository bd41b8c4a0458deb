// A complete, valid LendRecord for tests of the ledger and of its users; override what a test cares about.
import { RECORD_SCHEMA, type LendRecord } from '../../src/ledger/types';
import * as fs from 'node:fs';
import * as path from 'node:path';

export function sampleRecord(overrides: Partial<LendRecord> = {}): LendRecord {
  const now = new Date().toISOString();
  const ns = (ino: number, initial: boolean) => ({ id: { dev: 4, ino }, path: initial ? '/proc/1/ns/net' : null, pid: initial ? 1 : null, initial });
  return {
    schema: RECORD_SCHEMA,
    key: 'pci-0000_03_00_1',
    owner: 'attach:test',
    identity: { pciAddress: '0000:03:00.1', permMac: '02:00:00:00:03:01', mac: '02:00:00:00:03:01', ifindex: 7, name: 'ens3f1', kind: null },
    home: ns(4026531840, true),
    snapshot: { name: 'ens3f1', mac: '02:00:00:00:03:01', mtu: 1500, up: true, alias: null, altnames: [], vf: null },
    target: ns(4026532999, false),
    targetName: 'net1',
    targetIfindex: null,
    moved: true,
    requested: { up: true },
    droppedAltnames: [],
    phase: 'lending',
    step: 'recorded',
    history: [{ at: now, step: 'recorded' }],
    createdAt: now,
    updatedAt: now,
    meta: {},
    ...overrides,
  };
}

/**
 * Record `key`'s `field` namespace as the kernel's inode reuse leaves it: its namespace gone, its nsfs id now that of
 * the live namespace at `otherPath`, its cookie kept (the recorded namespace's) — deterministic, where waiting for
 * the kernel to hand an inode to us would race every other test making namespaces. Returns a function that puts the
 * recorded id back.
 */
export function giveRecordedInodeTo(stateDir: string, key: string, field: 'home' | 'target', otherPath: string): () => void {
  const file = path.join(stateDir, 'records', `${key}.json`);
  const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!/^[0-9]+$/.test(String(stored[field].cookie))) throw new Error(`record ${key} has no ${field} cookie to keep`);
  const recorded = stored[field].id;
  const st = fs.statSync(otherPath);
  const write = (id: unknown) => fs.writeFileSync(file, JSON.stringify({ ...stored, [field]: { ...stored[field], id } }, null, 2));
  write({ dev: st.dev, ino: st.ino });
  return () => write(recorded);
}
