// Owners as the engine takes them (a typed union) and as records store them (the key every version wrote).
import { describe, expect, it } from 'vitest';
import { assertOwner, ownerKey, ownerMatches, ownerOfKey, type Owner } from '../../src/ledger/owner';
import { recordProblem } from '../../src/ledger';
import { sampleRecord } from '../helpers/ledger-record';

const OWNERS: [Owner, string][] = [
  [{ kind: 'pod', containerId: 'abc', ifname: 'net1' }, 'cni:abc/net1'],
  [{ kind: 'attach', target: 'docker:kind-worker' }, 'attach:docker:kind-worker'],
  [{ kind: 'attach', target: '/proc/42/ns/net' }, 'attach:/proc/42/ns/net'],
  [{ kind: 'cluster', cluster: 'lab', node: 'lab-agent-0' }, 'cluster:lab/lab-agent-0'],
  [{ kind: 'stray' }, 'cleanup:stray'],
];

describe('owners', () => {
  it('are stored as the keys records always had, and read back', () => {
    for (const [owner, key] of OWNERS) {
      expect(ownerKey(owner)).toBe(key);
      expect(ownerOfKey(key)).toEqual(owner);
      expect(() => assertOwner(owner)).not.toThrow();
    }
    expect(ownerOfKey('someone:else')).toBeNull();
  });

  it('match one owner, a kind, or one cluster', () => {
    expect(ownerMatches('cni:abc/net1', { kind: 'pod', containerId: 'abc', ifname: 'net1' })).toBe(true);
    expect(ownerMatches('cni:abc/net2', { kind: 'pod', containerId: 'abc', ifname: 'net1' })).toBe(false);
    expect(ownerMatches('cni:abc/net1', { kind: 'pod' })).toBe(true);
    expect(ownerMatches('attach:x', { kind: 'pod' })).toBe(false);
    expect(ownerMatches('cluster:lab/n1', { kind: 'cluster', cluster: 'lab' })).toBe(true);
    expect(ownerMatches('cluster:lab2/n1', { kind: 'cluster', cluster: 'lab' })).toBe(false);
  });

  it('refuses what would not read back as itself', () => {
    for (const bad of [
      'cni:abc/net1',
      { kind: 'pod', containerId: 'a/b', ifname: 'net1' },
      { kind: 'pod', containerId: '', ifname: 'net1' },
      { kind: 'cluster', cluster: 'lab' },
      { kind: 'attach' },
      { kind: 'nobody' },
      null,
    ]) {
      expect(() => assertOwner(bad)).toThrow(TypeError);
    }
  });
});

describe('the VF count in a record', () => {
  it('is optional (older records), and checked when present', () => {
    const r = sampleRecord();
    expect(recordProblem(r)).toBeNull();
    expect(recordProblem({ ...r, vfCount: null })).toBeNull();
    expect(recordProblem({ ...r, vfCount: { pf: '0000:03:00.0', before: 2 } })).toBeNull();
    expect(recordProblem({ ...r, vfCount: { pf: '0000:03:00.0', before: -1 } })).toMatch(/vfCount/);
    expect(recordProblem({ ...r, vfCount: { before: 2 } })).toMatch(/vfCount/);
  });
});
