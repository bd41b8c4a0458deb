import { describe, expect, it } from 'vitest';
import { Progress, formatSeconds } from '../../src/cluster/orchestration/progress';

function capture(verbosity: 'quiet' | 'normal' | 'verbose') {
  let text = '';
  let t = 1000;
  const p = new Progress(verbosity, { write: (s: string) => (text += s) }, () => t);
  return { p, advance: (ms: number) => (t += ms), text: () => text };
}

describe('progress', () => {
  it('prints one line per step with the elapsed time', () => {
    const c = capture('normal');
    c.advance(1234);
    c.p.step('preflight');
    c.p.detail('hidden');
    c.p.warn('w');
    c.p.error('e');
    expect(c.text()).toBe('[  1.23s] preflight\nsriovctl: warning: w\nsriovctl: e\n');
  });

  it('-v adds each action, -q prints errors only', () => {
    const v = capture('verbose');
    v.p.step('s');
    v.p.detail('lend eth1');
    expect(v.text()).toBe('[  0.00s] s\n           lend eth1\n');
    const q = capture('quiet');
    q.p.step('s');
    q.p.detail('d');
    q.p.warn('w');
    q.p.error('boom');
    expect(q.text()).toBe('sriovctl: boom\n');
  });

  it('formats seconds', () => {
    expect(formatSeconds(0)).toBe('  0.00s');
    expect(formatSeconds(123456)).toBe('123.46s');
  });
});
