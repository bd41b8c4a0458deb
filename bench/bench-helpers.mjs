// Small shared helpers for bench/*.bench.mjs: timing, medians, fair ordering of contenders.

/** Milliseconds (fractional) taken by fn (sync or async). */
export async function timeMs(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The contenders rotated by round, so none always runs first (warm caches) or last. */
export function rotate(items, round) {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
