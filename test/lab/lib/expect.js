// Assertions whose failure is ONE readable line (the harness prints `FAIL <name>: <reason>`).
'use strict';

const { isDeepStrictEqual } = require('node:util');

/** Where a and b differ: [{ path: '[3].mac', a: 'aa:…', b: 'bb:…' }, …] (a value absent on one side is undefined). */
function differingPaths(a, b, at = '') {
  if (isDeepStrictEqual(a, b)) return [];
  const both = (x) => x !== null && typeof x === 'object';
  if (both(a) && both(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    const out = [];
    for (const k of keys) {
      const p = Array.isArray(a) ? `${at}[${k}]` : `${at}.${k}`;
      out.push(...differingPaths(a[k], b[k], p));
    }
    return out;
  }
  return [{ path: at || 'value', a, b }];
}

/** Paths where a and b differ: ['[3].mac: "aa:…" != "bb:…"', …]. */
function differences(a, b) {
  return differingPaths(a, b).map((d) => `${d.path}: ${JSON.stringify(d.a)} != ${JSON.stringify(d.b)}`);
}

/** Throws "<what>: <path>: <actual> != <expected>; …" (at most 4 differences shown). */
function expectEqual(actual, expected, what) {
  const d = differences(actual, expected);
  if (d.length === 0) return;
  const more = d.length > 4 ? `; … ${d.length - 4} more` : '';
  throw new Error(`${what}: ${d.slice(0, 4).join('; ')}${more}`);
}

function expect(cond, message) {
  if (!cond) throw new Error(message);
}

/** Runs fn, which must throw; returns the error. */
function expectThrows(fn, what) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error(`${what}: expected an error, but it succeeded`);
}

module.exports = { expect, expectEqual, expectThrows, differences, differingPaths };
