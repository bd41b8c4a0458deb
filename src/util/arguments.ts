// The checks of a plain argument (an integer in a range, a boolean) that every layer makes before a value reaches
// C++: a bad value is a TypeError that names it. The address and size rules are net's (src/net/validate.ts).

function show(v: unknown): string {
  try {
    if (typeof v === 'string' || (typeof v === 'object' && v !== null)) return JSON.stringify(v);
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

export function invalid(what: string, v: unknown, why?: string): TypeError {
  return new TypeError(`invalid ${what}: ${show(v)}${why ? ` (${why})` : ''}`);
}

export function assertInteger(what: string, v: unknown, min: number, max: number): asserts v is number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(what, v, `expected an integer in ${min}..${max}`);
  }
}

export function assertBoolean(what: string, v: unknown): asserts v is boolean {
  if (typeof v !== 'boolean') throw invalid(what, v, 'expected a boolean');
}
