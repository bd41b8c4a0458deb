// -v through the real executable: each command says on stderr what it did to the kernel and to what (attach,
// detach, cleanup, vfs) in a person's words — no engine step names — and an error's -v detail keeps our internal
// codes out (they are for --json); stdout is the same as without -v.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { lend } from '../helpers/engine';

const PF = '0000:6e:00.0';

describe('sriovctl -v', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  const detailLines = (stderr: string) => stderr.split('\n').filter(Boolean);

  it('attach and detach: the record, the move and the restore, each with its target', async () => {
    const pf = w.pf('a', PF);
    const node = w.netns('node');
    const ns = `/var/run/netns/${node}`;
    const file = path.join(w.env.stateDir, 'records', `pci-${PF.replace(/[:.]/g, '_')}.json`);

    const a = await w.run('-v', 'attach', pf.name, node, '--as', 'net1');
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe(`${pf.name}: lent to ${node} as net1\n`);
    expect(detailLines(a.stderr)).toEqual([
      `  recorded ${pf.name} in ${file}, before anything moves`,
      `  moved ${pf.name} to ${ns} as net1`,
      `  set MTU, MAC and link state of net1 in ${ns}`,
    ]);

    const d = await w.run('-v', 'detach', pf.name);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toBe(`${pf.name} (${PF}): returned as ${pf.name}\n`);
    expect(detailLines(d.stderr)).toEqual([
      `  moved net1 from ${ns} back to the initial namespace as ${pf.name}`,
      `  restored ${pf.name}: MTU ${pf.mtu}, MAC ${pf.mac}, 0 addresses, 0 routes, ${pf.up ? 'up' : 'down'}`,
      `  removed ${file}`,
    ]);
  });

  it('cleanup: each give-back; vfs: the sysfs write', async () => {
    const pf = w.pf('b', PF, { spec: { totalVfs: 2 } });
    const node = w.netns('node');
    lend({ nic: { name: pf.name }, target: { path: `/var/run/netns/${node}` }, owner: { kind: 'attach', target: node } });
    const c = await w.run('-v', 'cleanup');
    expect(c.code, c.stderr).toBe(0);
    expect(detailLines(c.stderr).slice(0, 2)).toEqual([`  moved ${pf.name} from /var/run/netns/${node} back to the initial namespace as ${pf.name}`, expect.stringMatching(new RegExp(`^  restored ${pf.name}: MTU `))]);

    const v = await w.run('-v', 'vfs', pf.name, '2');
    expect(v.code, v.stderr).toBe(0);
    expect(detailLines(v.stderr)).toEqual([`  sriov_numvfs of ${PF}: 0 -> 2`]);
    // the count asked is the count there: nothing is written, and -v does not claim a write
    const writes = w.sysfs.driver.events.filter((e) => e.kind === 'numvfs').length;
    const same = await w.run('-v', 'vfs', pf.name, '2');
    expect([same.code, detailLines(same.stderr)]).toEqual([0, [`  sriov_numvfs of ${PF}: already 2, nothing written`]]);
    expect(w.sysfs.driver.events.filter((e) => e.kind === 'numvfs')).toHaveLength(writes);
  });

  it('an error with -v names the operation, never our internal code', async () => {
    const r = await w.run('-v', 'vfs', '0000:7f:00.0');
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe(`sriovctl: vfs 0000:7f:00.0: sriov read PF: no device 0000:7f:00.0 under ${path.join(w.env.sysfsRoot, 'bus')}\n`);
  });
});
