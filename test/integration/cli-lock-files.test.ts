// Lock files do not pile up in <state dir>/locks: a NIC that is home (no record) has none once its lock is let go
// — after a detach, after a refused attach — while a lent NIC's record and lock stay. Through the real executable.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { lockFile } from '../../src/fs/file-lock';

const PF = '0000:6f:00.0';

describe('lock files of NICs that are home', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  const locks = () => fs.readdirSync(path.join(w.env.stateDir, 'locks'));

  it('are removed after a detach and after a refused attach; a lent NIC keeps its record', async () => {
    const pf = w.pf('a', PF);
    const node = w.netns('node');
    expect((await w.run('attach', pf.name, node)).code).toBe(0);
    expect(w.records()).toHaveLength(1);
    const d = await w.run('detach', pf.name);
    expect([d.code, d.stderr]).toEqual([0, '']);
    expect(locks()).toEqual([]);

    // refused after the NIC's lock was taken: already where it is asked to go
    expect((await w.run('attach', pf.name, node)).code).toBe(0);
    const again = await w.run('attach', PF, node);
    expect(again.code).toBe(1);
    expect(w.records()).toHaveLength(1);
    expect((await w.run('detach', PF)).code).toBe(0);
    expect([locks(), w.records()]).toEqual([[], []]);
  });

  it('cleanup removes those an older version left, not one somebody holds nor a file that is not a lock file', async () => {
    const pf = w.pf('b', PF);
    const node = w.netns('node');
    expect((await w.run('attach', pf.name, node)).code).toBe(0);
    const lentKey = `pci-${PF.replace(/[:.]/g, '_')}`;
    const dir = path.join(w.env.stateDir, 'locks');
    // what an older sriovctl left (it never removed a lock file), one held right now, and a file that is not ours
    for (const f of ['pci-0000_11_00_0.lock', 'mac-0a0b0c0d0e0f.lock', 'pci-0000_12_00_0.lock', 'notes.txt', `${lentKey}.lock`]) fs.writeFileSync(path.join(dir, f), '');
    const held = lockFile(path.join(dir, 'pci-0000_12_00_0.lock'), { timeoutMs: 0 });
    if (!('held' in held)) throw new Error('not taken');
    try {
      const c = await w.run('-v', 'cleanup');
      expect(c.code, c.stderr).toBe(0);
      expect(c.stderr).toContain('  removed the lock files of 2 NICs that are home\n');
      // the lent NIC was given back by this cleanup: its lock file went with its record
      expect(locks().sort()).toEqual(['notes.txt', 'pci-0000_12_00_0.lock']);
    } finally {
      held.held.release();
    }
  });
});
