// openSession at the engine's seam: a JavaScript caller's incomplete configuration is refused at once, naming the
// field, instead of failing deep inside a step as Node's own path error.
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config';
import { InvalidArgument } from '../../src/errors';
import { openSession } from '../../src/lend';

const whole = loadConfig({}, { stateDir: '/tmp/sriovctl-open-session-never-made/state', sysfsRoot: '/tmp/sriovctl-open-session-never-made/sys' });

function refusal(config: unknown): unknown {
  try {
    openSession(config as Config).close();
    return null;
  } catch (err) {
    return err;
  }
}

describe('openSession', () => {
  it('opens a session on a whole configuration', () => {
    expect(refusal(whole)).toBeNull();
  });

  it.each([
    ['resolvConf', undefined, 'config.resolvConf must be an absolute path (got undefined)'],
    ['stateDir', 'state', 'config.stateDir must be an absolute path (got "state")'],
    ['sysfsRoot', 7, 'config.sysfsRoot must be an absolute path (got number)'],
    ['env', null, 'config.env must be an object of environment variables (got null)'],
  ])('refuses a configuration whose %s is %s, naming it', (key, value, message) => {
    const err = refusal({ ...whole, [key]: value });
    expect(err).toBeInstanceOf(InvalidArgument);
    expect((err as Error).message).toBe(`openSession: ${message}`);
  });

  it('refuses no configuration at all', () => {
    expect((refusal(undefined) as Error).message).toBe('openSession: a configuration is needed (got undefined)');
  });
});
