// Ages as kubectl prints them: the two largest units.
import { describe, expect, it } from 'vitest';
import { ageOf } from '../../src/cli/age';

describe('ageOf', () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  it.each([
    ['2026-12-02T12:00:00Z', '0s'],
    ['2026-12-02T11:59:15Z', '45s'],
    ['2026-12-02T11:56:48Z', '3m12s'],
    ['2026-12-02T11:57:00Z', '3m'],
    ['2026-12-02T06:57:00Z', '5h3m'],
    ['2026-11-30T08:00:00Z', '2d4h'],
    ['2026-12-02T12:00:05Z', '0s'], // a clock a little behind the record's
    ['not a time', '?'],
  ])('%s → %s', (iso, age) => expect(ageOf(iso, now)).toBe(age));
});
