// What a record keeps of a NIC among its links, neighbours and queues (its master, its permanent entries, its root
// qdisc): optional (older records load), and checked when read.
import { describe, expect, it } from 'vitest';
import { recordProblem } from '../../src/ledger/validate';
import { sampleRecord } from '../helpers/ledger-record';

/** A sample record whose snapshot has `fields` set, or removed where a value is undefined. */
function withSnapshot(fields: Record<string, unknown>) {
  const r = sampleRecord() as unknown as { snapshot: Record<string, unknown> };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) delete r.snapshot[k];
    else r.snapshot[k] = v;
  }
  return r;
}
const withMaster = (master: unknown) => withSnapshot({ master });
const withNeighbours = (neighbours: unknown) => withSnapshot({ neighbours });
const withQdisc = withSnapshot;

describe('snapshot.master', () => {
  it('loads a record without it, with null, and with a name and an ifindex', () => {
    expect(recordProblem(withMaster(undefined))).toBeNull();
    expect(recordProblem(withMaster(null))).toBeNull();
    expect(recordProblem(withMaster({ name: 'br0', index: 7 }))).toBeNull();
  });

  it('makes the record corrupt when it is anything else', () => {
    for (const bad of [{ name: 'br0' }, { name: '../x/y', index: 7 }, { name: 'br0', index: 0 }, { name: 'br0', index: 7, extra: 1 }, 'br0', [1]]) {
      expect(recordProblem(withMaster(bad)), JSON.stringify(bad)).toMatch(/^field 'snapshot.master': /);
    }
  });
});


describe('snapshot.neighbours', () => {
  it('loads a record without them, and with entries of both families, with and without a hardware address', () => {
    expect(recordProblem(withNeighbours(undefined))).toBeNull();
    expect(recordProblem(withNeighbours([]))).toBeNull();
    const entries = [
      { address: '192.0.2.9', lladdr: '02:00:00:00:00:09', flags: 0 },
      { address: '2001:db8::9', lladdr: null, flags: 0x80 },
    ];
    expect(recordProblem(withNeighbours(entries))).toBeNull();
  });

  it('makes the record corrupt when an entry is anything else', () => {
    const ok = { address: '192.0.2.9', lladdr: '02:00:00:00:00:09', flags: 0 };
    for (const bad of [
      null,
      {},
      [null],
      [{ ...ok, address: '192.0.2.9/24' }],
      [{ ...ok, address: 'x' }],
      [{ ...ok, lladdr: '02:00' }],
      [{ ...ok, flags: 256 }],
      [{ ...ok, flags: -1 }],
      [{ ...ok, extra: 1 }],
      [{ address: ok.address, lladdr: ok.lladdr }],
    ]) {
      expect(recordProblem(withNeighbours(bad)), JSON.stringify(bad)).toMatch(/^field 'snapshot.neighbours': /);
    }
  });
});

describe('snapshot.qdisc and snapshot.qdiscsNotRestored', () => {
  it('loads a record without them, with null, and with a kind, a handle and hex options', () => {
    expect(recordProblem(withQdisc({}))).toBeNull();
    expect(recordProblem(withQdisc({ qdisc: null, qdiscsNotRestored: [] }))).toBeNull();
    expect(recordProblem(withQdisc({ qdisc: { kind: 'tbf', handle: 0x70000, options: '0a0b' }, qdiscsNotRestored: ['clsact qdisc ffff: and its filters'] }))).toBeNull();
  });

  it('makes the record corrupt when either is anything else', () => {
    const ok = { kind: 'tbf', handle: 0x70000, options: '0a0b' };
    for (const bad of [{ ...ok, kind: 'TBF' }, { ...ok, kind: '../x' }, { ...ok, handle: -1 }, { ...ok, options: 'abc' }, { ...ok, options: 'zz' }, { ...ok, extra: 1 }, 'tbf']) {
      expect(recordProblem(withQdisc({ qdisc: bad })), JSON.stringify(bad)).toMatch(/^field 'snapshot.qdisc': /);
    }
    for (const bad of ['x', [1], ['two\nlines'], ['x'.repeat(201)]]) {
      expect(recordProblem(withQdisc({ qdiscsNotRestored: bad })), JSON.stringify(bad)).toMatch(/^field 'snapshot.qdiscsNotRestored': /);
    }
  });
});
