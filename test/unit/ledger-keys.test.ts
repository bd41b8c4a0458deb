import { describe, expect, it } from 'vitest';
import { appendStep, assertRecordKey, recordKeyFor, recordProblem } from '../../src/ledger';
import { sampleRecord } from '../helpers/ledger-record';

const id = (o: Partial<{ pciAddress: string | null; permMac: string | null; mac: string | null }>) => ({
  pciAddress: null,
  permMac: null,
  mac: null,
  name: 'eth9',
  ...o,
});

describe('recordKeyFor', () => {
  it('uses the PCI address first, made file-name safe', () => {
    expect(recordKeyFor(id({ pciAddress: '0000:03:00.1', permMac: 'aa:bb:cc:dd:ee:ff' }))).toBe('pci-0000_03_00_1');
    expect(recordKeyFor(id({ pciAddress: '0000:AF:10.7' }))).toBe('pci-0000_af_10_7');
  });

  it('prefers the permanent MAC over the MAC', () => {
    expect(recordKeyFor(id({ permMac: 'AA:BB:CC:DD:EE:FF', mac: '02:00:00:00:00:01' }))).toBe('mac-aabbccddeeff');
    expect(recordKeyFor(id({ mac: '02:00:00:00:00:01' }))).toBe('mac-020000000001');
  });

  it('ignores an all-zero permanent MAC (drivers without one report zeros)', () => {
    expect(recordKeyFor(id({ permMac: '00:00:00:00:00:00', mac: '02:00:00:00:00:01' }))).toBe('mac-020000000001');
  });

  it('is stable across renames (the name is not part of the key)', () => {
    const a = recordKeyFor({ ...id({ mac: '02:00:00:00:00:01' }), name: 'eth0' });
    const b = recordKeyFor({ ...id({ mac: '02:00:00:00:00:01' }), name: 'net1' });
    expect(a).toBe(b);
  });

  it('refuses an identity without PCI address or MAC, naming the NIC', () => {
    expect(() => recordKeyFor(id({}))).toThrow(/eth9.*no PCI address, permanent MAC or MAC/);
  });

  it('produces keys that assertRecordKey accepts; rejects path tricks', () => {
    assertRecordKey(recordKeyFor(id({ pciAddress: 'netdevsim3' })));
    for (const bad of ['', '../x', 'pci-a/b', 'pci-0000:03:00.1', 'PCI-x', '.hidden', 'pci-']) {
      expect(() => assertRecordKey(bad)).toThrow(TypeError);
    }
  });
});

describe('recordProblem', () => {
  it('accepts a complete record', () => {
    expect(recordProblem(sampleRecord())).toBeNull();
  });

  it('names the schema mismatch', () => {
    expect(recordProblem({ ...sampleRecord(), schema: 2 })).toMatch(/schema 2 is not the supported schema 1/);
    expect(recordProblem({ ...sampleRecord(), schema: undefined })).toMatch(/schema undefined/);
  });

  it('names a missing or mistyped field', () => {
    const r: any = sampleRecord();
    delete r.owner;
    expect(recordProblem(r)).toMatch(/'owner'/);
    expect(recordProblem({ ...sampleRecord(), phase: 'lost' })).toMatch(/phase/);
    expect(recordProblem({ ...sampleRecord(), history: {} })).toMatch(/history/);
    expect(recordProblem([])).toMatch(/not a JSON object/);
    expect(recordProblem(null)).toMatch(/not a JSON object/);
  });
});

describe('appendStep', () => {
  it('returns a new record at the step, with history and updatedAt', () => {
    const r = sampleRecord({ updatedAt: '2000-01-01T00:00:00.000Z' });
    const next = appendStep(r, 'moved', 'into ns x');
    expect(next).not.toBe(r);
    expect(next.step).toBe('moved');
    expect(next.history.at(-1)).toMatchObject({ step: 'moved', note: 'into ns x' });
    expect(next.history).toHaveLength(r.history.length + 1);
    expect(next.updatedAt).not.toBe('2000-01-01T00:00:00.000Z');
    // pure: the input is untouched
    expect(r.step).toBe('recorded');
    expect(r.history).toHaveLength(1);
    expect(appendStep(r, 'x').history.at(-1)).not.toHaveProperty('note');
  });

  it('refuses an empty step', () => {
    expect(() => appendStep(sampleRecord(), '')).toThrow(TypeError);
  });
});
