// Many processes at once: 16 lends of 16 NICs all succeed; two processes racing for one NIC: one wins, the other
// is told BUSY, and nothing is half-done.
import { describe, expect, it } from 'vitest';
import { findRecords, giveBack } from '../helpers/engine';
import { nicState, runChild, standInNic, useLendScratch } from '../helpers/lend-fixture';

const space = useLendScratch();
const env = space.env;

describe('concurrency', () => {
  it('lends 16 NICs from 16 processes at once', async () => {
    const s = space.scratch();
    const node = s.netns('node');
    const nics = Array.from({ length: 16 }, (_, i) => standInNic(s, `c${i}`));
    const runs = await Promise.all(
      nics.map((nic) =>
        runChild(
          { op: 'lend', request: { nic: { name: nic.name }, target: { path: `/var/run/netns/${node}` }, owner: { kind: 'attach', target: `test:${nic.name}` } } },
          env(),
        ),
      ),
    );
    // the whole run in the message: a child that printed no result shows its exit status and stderr
    for (const r of runs) expect(r.parsed, JSON.stringify(r)).toMatchObject({ ok: true });
    expect(findRecords()).toHaveLength(16);
    for (const nic of nics) expect(nicState(nic.name, node)?.up).toBe(true);
    for (const r of findRecords()) expect((await giveBack(r.key)).outcome).toBe('returned');
    for (const nic of nics) expect(nicState(nic.name)).toEqual(nic);
  }, 300_000);

  it('two processes racing for one NIC: one wins, the other gets BUSY', async () => {
    const s = space.scratch();
    const a = s.netns('a');
    const b = s.netns('b');
    const nic = standInNic(s, 'r0');
    const job = (ns: string) => ({
      op: 'lend',
      request: { nic: { name: nic.name }, target: { path: `/var/run/netns/${ns}` }, owner: { kind: 'attach', target: `test:${ns}` } },
    });
    const [ra, rb] = await Promise.all([runChild(job(a), env()), runChild(job(b), env())]);
    const results = [ra.parsed, rb.parsed];
    expect(results.every((r) => r !== null), JSON.stringify([ra, rb])).toBe(true);
    const winners = results.filter((r) => r?.ok);
    const losers = results.filter((r) => r && !r.ok);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    // whether it lost the lock or came after the move, the loser is told the NIC is busy, naming no half-done state
    expect(losers[0].code).toBe('BUSY');
    const records = findRecords();
    expect(records).toHaveLength(1);
    const where = nicState(nic.name, a) ? a : b;
    expect(nicState(nic.name, where === a ? b : a)).toBeNull();
    expect((await giveBack(records[0].key)).outcome).toBe('returned');
    expect(nicState(nic.name)).toEqual(nic);
  }, 300_000);
});
