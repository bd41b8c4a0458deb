// findRecords, the lookup behind DEL (by owner), cluster down (by key) and GC (by kind): by owner it reads that
// owner's records through the owner index, and it still finds a record whose owner is written with JSON escapes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openLedger, writeRecord, type Ledger } from '../../src/ledger';
import { openSession, type LendSession } from '../../src/lend';
import { sampleRecord } from '../helpers/ledger-record';
import { loadConfig } from '../../src/config';

let tmp: string;
let ledger: Ledger;
let session: LendSession;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-find-records-'));
  fs.mkdirSync(path.join(tmp, 'sys'));
  ledger = openLedger(path.join(tmp, 'state'));
  session = openSession(loadConfig({}, { stateDir: ledger.dir, sysfsRoot: path.join(tmp, 'sys') }));
});

afterEach(() => {
  session.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const podA = { kind: 'pod', containerId: 'ctr-a', ifname: 'net1' } as const;
const podB = { kind: 'pod', containerId: 'ctr-b', ifname: 'net1' } as const;

it('by owner: its records, including one whose owner is written with JSON escapes; no other owner\'s', () => {
  writeRecord(ledger, sampleRecord({ key: 'mac-020000000001', owner: 'cni:ctr-a/net1' }));
  writeRecord(ledger, sampleRecord({ key: 'mac-020000000002', owner: 'cni:ctr-b/net1' }));
  // the same owner as JSON may also spell it: '\/' and '\u0061' are '/' and 'a' to JSON.parse
  const escaped = JSON.stringify(sampleRecord({ key: 'mac-020000000003', owner: 'cni:ctr-a/net1' })).replace('"cni:ctr-a/net1"', '"cni:ctr-\\u0061\\/net1"');
  fs.writeFileSync(path.join(ledger.dir, 'records', 'mac-020000000003.json'), escaped);

  expect(session.findRecords({ owner: podA }).map((r) => r.key)).toEqual(['mac-020000000001', 'mac-020000000003']);
  expect(session.findRecords({ owner: podB }).map((r) => r.key)).toEqual(['mac-020000000002']);
  expect(session.findRecords({ owner: { kind: 'pod' } })).toHaveLength(3);
});

it('by key: that record alone, none for a key without one or with a corrupt one', () => {
  writeRecord(ledger, sampleRecord({ key: 'mac-020000000001', owner: 'cni:ctr-a/net1' }));
  fs.writeFileSync(path.join(ledger.dir, 'records', 'mac-020000000002.json'), 'garbage');
  expect(session.findRecords({ key: 'mac-020000000001' }).map((r) => r.owner)).toEqual(['cni:ctr-a/net1']);
  expect(session.findRecords({ key: 'mac-020000000001', owner: podB })).toEqual([]);
  expect(session.findRecords({ key: 'mac-020000000002' })).toEqual([]);
  expect(session.findRecords({ key: 'mac-020000000009' })).toEqual([]);
});

