// Which records `cluster down` takes for a cluster: its nodes' own, and those attached inside it — NICs whose home is
// one of its nodes (a pod attachment a node's CNI made). A node namespace is known by its inode and its cookie: the
// kernel gives a dead node's inode to the next namespace made, and a NIC lent from that newer namespace is not the
// cluster's to give back.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openLedger, writeRecord } from '../../src/ledger';
import { openSession, type LendSession } from '../../src/lend';
import { sampleRecord } from '../helpers/ledger-record';
import { loadConfig } from '../../src/config';

let tmp: string;
let session: LendSession;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-records-of-'));
  fs.mkdirSync(path.join(tmp, 'sys'));
  session = openSession(loadConfig({}, { stateDir: path.join(tmp, 'state'), sysfsRoot: path.join(tmp, 'sys') }));
});

afterEach(() => {
  session.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const ns = (ino: number, cookie?: string | null) => ({ id: { dev: 4, ino }, path: null, pid: null, initial: false, cookie });
const NODE = 4026532100;

it("takes a NIC whose home is a node, not one from a newer namespace that was given a node's inode", () => {
  const ledger = openLedger(path.join(tmp, 'state'));
  const nic = (key: string, home: ReturnType<typeof ns>) =>
    sampleRecord({ key, owner: `cni:${key}/net1`, phase: 'lent', identity: { ...sampleRecord().identity, pciAddress: null }, home });
  writeRecord(ledger, sampleRecord({ key: 'pci-0000_03_00_1', owner: 'cluster:c1/c1-agent-0', phase: 'lent', target: ns(NODE, '7001') }));
  writeRecord(ledger, nic('mac-0200000000aa', ns(NODE, '7001')));
  writeRecord(ledger, nic('mac-0200000000bb', ns(NODE, '9001')));
  // no cookie on one side (an older record, a kernel before 5.14): the inode decides
  writeRecord(ledger, nic('mac-0200000000cc', ns(NODE, null)));
  writeRecord(ledger, nic('mac-0200000000dd', ns(NODE + 1, '7001')));

  const { own, borrowed } = session.recordsOfCluster('c1');
  expect(own.map((r) => r.key)).toEqual(['pci-0000_03_00_1']);
  expect(borrowed.map((r) => r.key).sort()).toEqual(['mac-0200000000aa', 'mac-0200000000cc']);
});

it('gives back what is attached inside the cluster before its nodes\' PFs, every record tried, one outcome each', async () => {
  const ledger = openLedger(path.join(tmp, 'state'));
  writeRecord(ledger, sampleRecord({ key: 'pci-0000_03_00_1', owner: 'cluster:c1/c1-agent-0', phase: 'lent', target: ns(NODE, '7001') }));
  writeRecord(ledger, sampleRecord({ key: 'mac-0200000000aa', owner: 'cni:mac-0200000000aa/net1', phase: 'lent', identity: { ...sampleRecord().identity, pciAddress: null }, home: ns(NODE, '7001') }));
  const seen: string[] = [];
  const given = await session.giveBackCluster('c1', { lockTimeoutMs: 0 }, {
    selected: (r) => seen.push(`selected ${r.own.length} own, ${r.borrowed.length} inside`),
    starting: (r, step) => seen.push(`${step} ${r.key}`),
    done: (o, step) => seen.push(`done ${step} ${o.record.key}`),
  });
  expect(seen).toEqual([
    'selected 1 own, 1 inside',
    'nic mac-0200000000aa',
    'done nic mac-0200000000aa',
    'nic-keeping-vf-count pci-0000_03_00_1',
    'done nic-keeping-vf-count pci-0000_03_00_1',
  ]);
  expect(given.nics.map((o) => o.record.key)).toEqual(['mac-0200000000aa', 'pci-0000_03_00_1']);
  expect(given.nics.every((o) => (o.result === undefined) !== (o.failure === undefined))).toBe(true);
  expect(given.vfCounts).toEqual([]);
});
