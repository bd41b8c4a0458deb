// Engine steps that ask their runner for slow calls: made in place by runWaitsSync, off the thread by runWaits; a
// failure either way is thrown where the steps asked, so their own cleanup (a lend's rollback) runs.
import { describe, expect, it } from 'vitest';
import { runSteps, runWaits, runWaitsSync, serveOthersWhileWaiting, slowly, type SlowCall, type WaitingSteps } from '../../src/util/wait';

function* steps(call: SlowCall, log: string[]): WaitingSteps<string> {
  log.push('before');
  try {
    yield call;
    log.push('after');
    return 'done';
  } catch (err) {
    log.push(`rolled back: ${(err as Error).message}`);
    throw err;
  }
}

const calls = (log: string[], fail = false): SlowCall => ({
  inPlace: () => {
    log.push('in place');
    if (fail) throw new Error('refused');
  },
  offThread: async () => {
    log.push('off thread');
    await new Promise((r) => setImmediate(r));
    if (fail) throw new Error('refused');
  },
});

describe('slow calls of waiting steps', () => {
  it('runWaitsSync makes the call in place, runWaits off the thread', async () => {
    const sync: string[] = [];
    expect(runWaitsSync(steps(calls(sync), sync))).toBe('done');
    expect(sync).toEqual(['before', 'in place', 'after']);
    const off: string[] = [];
    expect(await runWaits(steps(calls(off), off))).toBe('done');
    expect(off).toEqual(['before', 'off thread', 'after']);
  });

  it('a failed call is thrown into the steps, which clean up and fail with it', async () => {
    const sync: string[] = [];
    expect(() => runWaitsSync(steps(calls(sync, true), sync))).toThrow('refused');
    expect(sync).toEqual(['before', 'in place', 'rolled back: refused']);
    const off: string[] = [];
    await expect(runWaits(steps(calls(off, true), off))).rejects.toThrow('refused');
    expect(off).toEqual(['before', 'off thread', 'rolled back: refused']);
  });

  it('a call that throws before it returns a promise is a failure all the same', async () => {
    const log: string[] = [];
    const call: SlowCall = {
      inPlace: () => undefined,
      offThread: () => {
        throw new Error('invalid');
      },
    };
    await expect(runWaits(steps(call, log))).rejects.toThrow('invalid');
    expect(log).toEqual(['before', 'rolled back: invalid']);
  });

  it('a call answers the steps with its result, either way', async () => {
    function* lookup(): WaitingSteps<number> {
      return (yield* slowly({ inPlace: () => 7, offThread: async () => 7 })) + 1;
    }
    expect(runWaitsSync(lookup())).toBe(8);
    expect(await runWaits(lookup())).toBe(8);
  });

  it('runSteps makes the calls off the thread only while the process serves others (the daemon)', async () => {
    const alone: string[] = [];
    expect(await runSteps(steps(calls(alone), alone))).toBe('done');
    expect(alone).toEqual(['before', 'in place', 'after']);
    serveOthersWhileWaiting(true);
    try {
      const serving: string[] = [];
      expect(await runSteps(steps(calls(serving), serving))).toBe('done');
      expect(serving).toEqual(['before', 'off thread', 'after']);
      const failing: string[] = [];
      await expect(runSteps(steps(calls(failing, true), failing))).rejects.toThrow('refused');
    } finally {
      serveOthersWhileWaiting(false);
    }
    const failing: string[] = [];
    await expect(runSteps(steps(calls(failing, true), failing))).rejects.toThrow('refused');
    expect(failing).toEqual(['before', 'in place', 'rolled back: refused']);
  });
});
