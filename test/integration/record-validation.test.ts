// Records validated when read: every value of a record that give-back acts on (names, MACs,
// ifindexes, namespace paths, the IPAM plugin DEL runs) is checked with the project's one rule for it. A planted
// record whose CNI meta names an IPAM type like "../../evil" never runs it; a bad record is reported (status
// names the file and why) and never acted upon.
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLedger, readRecord, recordPath, scanRecords, type Ledger } from '../../src/ledger';
import type { LendRecord } from '../../src/ledger/types';
import { findPlugin } from '../../src/cni/delegate';
import { assertBuilt, sriovctl } from '../helpers/cli-process';
import { DEBIAN_CNI, requireBundle, runCni } from '../helpers/cni-run';
import { sampleRecord } from '../helpers/ledger-record';

const KEY = 'pci-0000_03_00_1';
let root: string;
let ledger: Ledger;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sriovctl-h1-records-'));
  ledger = openLedger(join(root, 'state'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Writes `r` as the record file directly, as an attacker (or a damaged disk) would: no check on the way in. */
function plant(r: LendRecord): string {
  const file = recordPath(ledger, r.key);
  writeFileSync(file, JSON.stringify(r), { mode: 0o600 });
  return file;
}

/** An executable that leaves `marker` behind when run. */
function evilPlugin(marker: string): string {
  const evil = join(root, 'evil');
  writeFileSync(evil, `#!/bin/sh\ntouch ${marker}\necho '{}'\n`);
  chmodSync(evil, 0o755);
  return evil;
}

function podRecord(meta: Record<string, unknown>, overrides: Partial<LendRecord> = {}): LendRecord {
  return sampleRecord({ key: KEY, owner: 'cni:h1ctr/net1', phase: 'lent', step: 'done', meta, ...overrides });
}

describe('a record is validated when read', () => {
  it('an IPAM type that is a path makes the record corrupt, naming the file and the field', () => {
    const file = plant(podRecord({ network: 'n', cniVersion: '1.1.0', ipam: { type: '../../evil', conf: { type: '../../evil' } } }));
    expect(() => readRecord(ledger, KEY)).toThrow(/meta\.ipam\.type/);
    const scan = scanRecords(ledger);
    expect(scan.records).toEqual([]);
    expect(scan.corrupt).toEqual([{ file, error: expect.stringMatching(/meta\.ipam\.type.*plugin file name/) }]);
  });

  it.each([
    ['identity.name', { identity: { ...sampleRecord().identity, name: '../etc' } }],
    ['targetName', { targetName: 'eth0 x' }],
    ['snapshot.mac', { snapshot: { ...sampleRecord().snapshot, mac: 'not-a-mac' } }],
    ['targetIfindex', { targetIfindex: -3 }],
    ['droppedAltnames', { droppedAltnames: ['a/b'] }],
    ['target', { target: { ...sampleRecord().target, path: 'relative/ns' } }],
    ['identity.pciAddress', { identity: { ...sampleRecord().identity, pciAddress: '../../devices' } }],
  ] as [string, Partial<LendRecord>][])('a bad %s makes the record corrupt', (field, overrides) => {
    plant(sampleRecord({ key: KEY, ...overrides }));
    const scan = scanRecords(ledger);
    expect(scan.records).toEqual([]);
    expect(scan.corrupt[0]?.error).toContain(`field '${field}'`);
  });

  it('findPlugin never resolves a path, only a file name in CNI_PATH', () => {
    const marker = join(root, 'ran');
    const evil = evilPlugin(marker);
    expect(() => findPlugin(relative(DEBIAN_CNI, evil), [DEBIAN_CNI])).toThrow(/plugin file name/);
  });

  it('a routine DEL never runs the IPAM type of a planted record; status reports the record', async () => {
    requireBundle();
    assertBuilt();
    const marker = join(root, 'ran');
    const type = relative(DEBIAN_CNI, evilPlugin(marker));
    const file = plant(podRecord({ network: 'h1net', cniVersion: '1.1.0', ipam: { type, conf: { cniVersion: '1.1.0', name: 'h1net', ipam: { type } } } }));
    const config = { cniVersion: '1.1.0', name: 'h1net', type: 'sriovctl-cni', deviceID: '0000:03:00.1' };
    const a = runCni({ command: 'DEL', containerId: 'h1ctr', ifname: 'net1', netns: '', config }, { stateDir: ledger.dir, sim: { root } });
    expect(existsSync(marker), `${a.stdout}${a.stderr}`).toBe(false);
    expect(existsSync(file)).toBe(true);
    const st = await sriovctl({ stateDir: ledger.dir, sysfsRoot: root }, ['status']);
    expect(`${st.stdout}${st.stderr}`).toContain(file);
    expect(`${st.stdout}${st.stderr}`).toContain('meta.ipam.type');
  });
});
