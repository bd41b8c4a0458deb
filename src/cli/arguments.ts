// Parsers for option values; their errors become commander usage errors (exit 2).
import { InvalidArgumentError } from 'commander';

/** A non-negative integer (a VF count). */
export function parseCount(value: string): number {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidArgumentError(`not a count: ${JSON.stringify(value)}`);
  return Number(value);
}

/** A positive number of seconds (fractions allowed). */
export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0)) throw new InvalidArgumentError(`not a number of seconds: ${JSON.stringify(value)}`);
  return n;
}
