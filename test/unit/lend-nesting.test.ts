// Lends of one NIC made from where an earlier lend put it (host → node → pod), in one ledger: their keys, the
// order they are given back in, and which one a person's `detach <nic>` means.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nestedKey, openLedger, writeRecord, type Ledger } from '../../src/ledger';
import { lendKeyFor, nestedKeys, nestingDepth, outermostOf } from '../../src/lend/nesting';
import { giveBackOrder } from '../../src/lend/give-back-each';
import { sampleRecord } from '../helpers/ledger-record';

let tmp: string;
let ledger: Ledger;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-nesting-'));
  ledger = openLedger(path.join(tmp, 'state'));
});

afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const BASE = 'pci-0000_03_00_1';
const identity = sampleRecord().identity;
const ns = (ino: number, cookie?: string) => ({ id: { dev: 4, ino }, path: null, pid: null, initial: false, cookie });
const HOST = { dev: 4, ino: 4026531840 };
const NODE = { dev: 4, ino: 4026532100 };
const POD = { dev: 4, ino: 4026532200 };
const SANDBOX = { dev: 4, ino: 4026532300 };

/** A lent record of key `key` whose NIC went from `from` to `to` (whose cookie was `toCookie`). */
function lent(key: string, from: { ino: number }, to: { ino: number }, toCookie?: string): void {
  writeRecord(ledger, sampleRecord({ key, phase: 'lent', step: 'configured', home: ns(from.ino), target: ns(to.ino, toCookie) }));
}

describe('lendKeyFor', () => {
  it('is the NIC\'s own key when nothing holds it', () => {
    expect(lendKeyFor(ledger, identity, { id: HOST }, HOST)).toBe(BASE);
  });

  it('nests a lend made from the namespace a lent record put the NIC in, one level per lend', () => {
    lent(BASE, HOST, NODE);
    const inNode = nestedKey(BASE, NODE);
    expect(lendKeyFor(ledger, identity, { id: NODE }, NODE)).toBe(inNode);
    expect(inNode).toBe(`${BASE}_in_${NODE.ino.toString(16)}`);
    lent(inNode, NODE, POD);
    expect(lendKeyFor(ledger, identity, { id: POD }, POD)).toBe(nestedKey(inNode, POD));
  });

  it('keeps the own key (so the holder is reported) when the NIC is asked for from anywhere else', () => {
    lent(BASE, HOST, NODE);
    expect(lendKeyFor(ledger, identity, { id: SANDBOX }, SANDBOX)).toBe(BASE);
    expect(lendKeyFor(ledger, identity, { id: HOST }, HOST)).toBe(BASE);
  });

  it('nests only for a caller inside that namespace: the host naming the NIC in the node does not lend it on', () => {
    lent(BASE, HOST, NODE);
    expect(lendKeyFor(ledger, identity, { id: NODE }, HOST)).toBe(BASE);
  });

  it('does not nest under a record whose target is gone, though the caller\'s namespace was given its inode', () => {
    lent(BASE, HOST, NODE, '8193');
    // another cookie: a newer namespace with the gone node's inode; its own key, so prepare() finds the old lend
    expect(lendKeyFor(ledger, identity, { id: NODE, cookie: '9001' }, NODE)).toBe(BASE);
    expect(lendKeyFor(ledger, identity, { id: NODE, cookie: '8193' }, NODE)).toBe(nestedKey(BASE, NODE));
    // no cookie on one side (an older record, a kernel before 5.14): the inode decides, as before
    expect(lendKeyFor(ledger, identity, { id: NODE, cookie: null }, NODE)).toBe(nestedKey(BASE, NODE));
  });

  it('does not nest under a record that is not lent (a crashed lend is finished under its own key)', () => {
    writeRecord(ledger, sampleRecord({ key: BASE, phase: 'lending', home: ns(HOST.ino), target: ns(NODE.ino) }));
    expect(lendKeyFor(ledger, identity, { id: NODE }, NODE)).toBe(BASE);
  });
});

describe('give-back order and detach', () => {
  it('lists nested lends innermost first, and keeps only the outermost of one NIC', () => {
    lent(BASE, HOST, NODE);
    const inNode = nestedKey(BASE, NODE);
    lent(inNode, NODE, POD);
    const inPod = nestedKey(inNode, POD);
    lent(inPod, POD, SANDBOX);
    lent('pci-0000_03_00_2', HOST, NODE);
    expect(nestedKeys(ledger, BASE)).toEqual([inPod, inNode]);
    expect(nestedKeys(ledger, inPod)).toEqual([]);
    expect([BASE, inNode, inPod].map(nestingDepth)).toEqual([0, 1, 2]);
    expect(outermostOf([{ key: inPod }, { key: BASE }, { key: inNode }])).toEqual([{ key: BASE }]);
    expect(outermostOf([{ key: inPod }, { key: inNode }])).toEqual([{ key: inNode }]);
  });

  it('passes over a nested record that cannot be read, a temp file and a file not named as a record', () => {
    lent(BASE, HOST, NODE);
    const inNode = nestedKey(BASE, NODE);
    lent(inNode, NODE, POD);
    const records = path.join(ledger.dir, 'records');
    fs.writeFileSync(path.join(records, `${nestedKey(BASE, POD)}.json`), 'not json');
    fs.writeFileSync(path.join(records, `.${nestedKey(BASE, SANDBOX)}.json.tmp-1-0`), '{}');
    fs.writeFileSync(path.join(records, `${nestedKey(BASE, SANDBOX)}.txt`), '{}');
    expect(nestedKeys(ledger, BASE)).toEqual([inNode]);
  });
});

describe('giveBackOrder', () => {
  it('puts nested lends before the lends they sit in, and keeps the selected order among equals', () => {
    const inNode = nestedKey(BASE, NODE);
    const inPod = nestedKey(inNode, POD);
    const other = 'pci-0000_04_00_0';
    const records = [BASE, other, inNode, inPod].map((key) => sampleRecord({ key }));
    expect(giveBackOrder(records).map((r) => r.key)).toEqual([inPod, inNode, BASE, other]);
  });
});
