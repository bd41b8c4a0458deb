// DEL through the real executable finds its record through the owner index (src/ledger/owner-index.ts) among other
// pods' records, and still finds it whatever became of the index between ADD and DEL: gone, a file in its place,
// entries or its bucket lost, junk beside them, a bucket naming only a file that is gone, or entries made in
// another boot and naming another owner.
import { mkdirSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLedger, writeRecord } from '../../src/ledger';
import { ownerHash } from '../../src/ledger/owner-index';
import { hostLocalAllocations, ledgerRecords, netnsPath, runCni, type CniCall, type CniRoots } from '../helpers/cni-run';
import { ipJson, Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';
import { sampleRecord } from '../helpers/ledger-record';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dataDir: string;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir: dataDir } = w), 'x0', { tempDir: 'cni-owner-index-' });

const OWNER = 'cni:c1/net1';

function call(command: string, more: Partial<CniCall> = {}) {
  const config = deviceConf(s, nic, { type: 'host-local', dataDir, ranges: [[{ subnet: '10.91.0.0/24' }]] }, {}, '1.0.0');
  return runCni({ command, containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config, ...more }, roots);
}

const owners = () => join(roots.stateDir, 'owners');
const ownRecord = () => ledgerRecords(roots.stateDir).find((r) => r.owner === OWNER);
/** Our record's entry: '<key>.<inode>.<hash of our owner>'. */
const ownEntry = () => readdirSync(owners()).find((n) => n.startsWith(`${ownRecord().key}.`))!;
/** Our owner's bucket: 'o.<hash of our owner>', holding '<key>.<inode>'. */
const ownBucket = () => join(owners(), `o.${ownerHash(OWNER)}`);

const damage: Record<string, () => void> = {
  'its index directory is gone': () => rmSync(owners(), { recursive: true }),
  'a file stands in place of its index directory': () => {
    rmSync(owners(), { recursive: true });
    writeFileSync(owners(), 'junk');
  },
  'its bucket is gone and a file stands in its place': () => {
    rmSync(ownBucket(), { recursive: true });
    writeFileSync(ownBucket(), 'junk');
  },
  'its bucket names only a file that is gone': () => {
    for (const e of readdirSync(ownBucket())) renameSync(join(ownBucket(), e), join(ownBucket(), e.replace(/\.[0-9a-f]+$/, '.1')));
  },
  'its entries are gone and junk lies beside the others': () => {
    unlinkSync(join(owners(), ownEntry()));
    rmSync(ownBucket(), { recursive: true });
    for (const junk of ['junk', `${ownRecord().key}..`, 'a.b.c.d']) writeFileSync(join(owners(), junk), '');
    mkdirSync(join(owners(), `${ownRecord().key}.1.1`));
  },
  'its entries were made in another boot and name another owner': () => {
    const entry = ownEntry();
    renameSync(join(owners(), entry), join(owners(), entry.replace(/\.[0-9a-f]+$/, `.${ownerHash('cni:someone-else/net1')}`)));
    for (const stamp of readdirSync(owners()).filter((n) => n.startsWith('boot.'))) {
      renameSync(join(owners(), stamp), join(owners(), 'boot.00000000-0000-4000-8000-000000000000'));
    }
  },
};

describe('DEL among other pods\' records, with the owner index', () => {
  it.each(Object.keys(damage))('gives the NIC back when %s', (what) => {
    const ledger = openLedger(roots.stateDir);
    for (let i = 0; i < 10; i++) writeRecord(ledger, sampleRecord({ key: `mac-02aa000000${String(i).padStart(2, '0')}`, owner: `cni:other-${i}/net1` }));
    const add = call('ADD');
    expect(add.status, add.stdout).toBe(0);
    // a first DEL of another attachment indexes the ledger (its boot stamp)
    expect(call('DEL', { containerId: 'c-none' }).status).toBe(0);
    expect(readdirSync(owners()).filter((n) => n.startsWith('boot.'))).toHaveLength(1);
    expect(readdirSync(owners()).filter((n) => n.startsWith(`${ownRecord().key}.`))).toEqual([ownEntry()]);
    expect(ownEntry()).toMatch(new RegExp(`\\.${ownerHash(OWNER)}$`));
    expect(readdirSync(ownBucket())).toEqual([`${ownRecord().key}.${ownEntry().split('.')[1]}`]);

    damage[what]();
    const del = call('DEL');
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ipJson<any[]>('-n', pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
    expect(ownRecord()).toBeUndefined();
    expect(ledgerRecords(roots.stateDir)).toHaveLength(10);
    expect(hostLocalAllocations(dataDir, `net-${s.prefix}`)).toEqual([]);
  });
});
