// SRIOVCTL_DAEMON_SWEEP_S, read by loadConfig: whole seconds 0 (off) to 3600, default 30; anything else is named
// in the reason the daemon refuses to start with.
import { describe, expect, it } from 'vitest';
import { daemonSweepOf, loadConfig } from '../../src/config';

describe('SRIOVCTL_DAEMON_SWEEP_S', () => {
  it('defaults to every 30 s, unset or empty', () => {
    expect(loadConfig({}).daemonSweep).toEqual({ everyMs: 30_000 });
    expect(daemonSweepOf('')).toEqual({ everyMs: 30_000 });
  });

  it('takes whole seconds from 0 (off) to 3600', () => {
    expect(loadConfig({ SRIOVCTL_DAEMON_SWEEP_S: '0' }).daemonSweep).toEqual({ everyMs: 0 });
    expect(daemonSweepOf('1')).toEqual({ everyMs: 1000 });
    expect(daemonSweepOf('3600')).toEqual({ everyMs: 3_600_000 });
  });

  it('anything else is invalid, naming the variable and the value', () => {
    for (const raw of ['-1', '1.5', '3601', '30s', ' 30', '99999']) {
      expect(daemonSweepOf(raw)).toEqual({ invalid: `SRIOVCTL_DAEMON_SWEEP_S ${JSON.stringify(raw)}: want whole seconds from 0 (off) to 3600` });
    }
  });
});
