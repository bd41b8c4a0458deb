// Our IP text parser (src/net/ip-text.ts, which spares the CNI plugin loading node:net) against node:net itself,
// on hand-picked edge cases and on random strings built from address-like pieces.
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ipFamily } from '../../src/net/ip-text';

const CASES = [
  '0.0.0.0', '255.255.255.255', '10.1.2.3', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.04', '1..3.4', ' 1.2.3.4',
  '1.2.3.4 ', '', '.', '::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7', '1::2::3', ':1::', '1:::2', 'fe80::1', 'FE80::ABCD', '12345::', 'g::1', '::ffff:1.2.3.4', '::1.2.3.4',
  '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4', '1:2:3:4:5::1.2.3.4', '1.2.3.4::', '::1.2.3.4:1', '1:2:3:4:5:6:7:8::',
  '::ffff:256.1.1.1', '2001:db8::/64', '[::1]', '1:2:3:4:5:6::7', '0:0:0:0:0:0:0:0', 'a:b:c:d:e:f:a:b', ':', ':::',
];

describe('ipFamily', () => {
  it('agrees with node:net on edge cases', () => {
    for (const s of CASES) expect(ipFamily(s), s).toBe(isIP(s));
  });

  it('refuses zone indexes, which node:net accepts', () => {
    expect(isIP('fe80::1%eth0')).toBe(6);
    expect(ipFamily('fe80::1%eth0')).toBe(0);
  });

  it('agrees with node:net on 20 000 random address-like strings', () => {
    const pieces = ['1', '0', '00', '255', '256', 'ff', 'FFFF', '12345', 'g', ':', '::', '.', '1.2.3.4', 'a'];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let sixes = 0;
    for (let i = 0; i < 20_000; i++) {
      let s = '';
      const len = 1 + rand(12);
      for (let k = 0; k < len; k++) s += pieces[rand(pieces.length)];
      expect(ipFamily(s), s).toBe(isIP(s));
      if (ipFamily(s) === 6) sixes++;
    }
    expect(sixes).toBeGreaterThan(100);
  });
});
