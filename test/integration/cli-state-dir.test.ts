// A state directory that cannot be created (procfs answers mkdir with ENOENT whatever the parent) fails the
// commands that need it at once, in one line naming it: no create-parents loop spinning forever.
import { describe, expect, it } from 'vitest';
import { assertBuilt, sriovctl } from '../helpers/cli-process';

describe('an uncreatable state directory', () => {
  it.each(['cleanup', 'detach --all'])('sriovctl %s fails at once, naming it', async (command) => {
    assertBuilt();
    const stateDir = '/proc/sriovctl-nonexistent/state';
    const t0 = Date.now();
    const r = await sriovctl({ stateDir, sysfsRoot: '/sys' }, command.split(' '));
    // the helper kills the process at 60 s; before the fix it never ended by itself
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('/proc/sriovctl-nonexistent');
    expect(r.stdout).toBe('');
  });
});
