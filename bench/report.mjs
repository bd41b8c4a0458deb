// What `npm run bench` prints for each ratio and how it judges targets. Pure: no I/O, so the rules are tested
// without running a bench (test/unit/bench-runner.test.ts).
//
// A ratio is judged on its median (the value the bench passes). The per-round ratios of the alternated rounds
// give its spread; a target that lies inside the spread — some rounds on each side of it — is reported as
// "within the spread": the median still decides met or missed, but the reader learns that the verdict is noise
// and not a change. A ratio whose value is not a finite number is a measurement that could not be made.

/** Four significant digits, no trailing zeros. */
export const formatNumber = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(4))) : String(v));

/** `≤ 1.2`, `≥ 20`, `≥ 1 and ≤ 2`; '' without a target. */
export function describeTarget(target) {
  const parts = [];
  if (target.min !== undefined) parts.push(`≥ ${target.min}`);
  if (target.max !== undefined) parts.push(`≤ ${target.max}`);
  return parts.join(' and ');
}

const meets = (v, target) => (target.min === undefined || v >= target.min) && (target.max === undefined || v <= target.max);

function checkArguments(what, target, rounds) {
  if (typeof what !== 'string' || what === '' || /\s/.test(what)) throw new TypeError(`ratio name must be one word, got ${JSON.stringify(what)}`);
  if (target === null || typeof target !== 'object') throw new TypeError(`ratio ${what}: target must be { min?, max? }, got ${JSON.stringify(target)}`);
  for (const k of ['min', 'max']) {
    if (target[k] !== undefined && !Number.isFinite(target[k])) throw new TypeError(`ratio ${what}: target.${k} must be a number`);
  }
  if (rounds !== undefined && (!Array.isArray(rounds) || rounds.length === 0 || rounds.some((r) => typeof r !== 'number' || Number.isNaN(r)))) {
    throw new TypeError(`ratio ${what}: rounds must be a non-empty array of per-round ratios`);
  }
}

/**
 * Judges one ratio. Returns { what, value, target, spread: {min, max, n} | null, measured, verdict, withinSpread }
 * where verdict is 'met' | 'missed' | 'none' (no target) | 'unmeasured' (value not finite).
 */
export function judge(what, value, target = {}, rounds = undefined) {
  target = target ?? {};
  checkArguments(what, target, rounds);
  const spread = rounds ? { min: Math.min(...rounds), max: Math.max(...rounds), n: rounds.length } : null;
  const hasTarget = target.min !== undefined || target.max !== undefined;
  const measured = typeof value === 'number' && Number.isFinite(value);
  const verdict = !measured ? 'unmeasured' : !hasTarget ? 'none' : meets(value, target) ? 'met' : 'missed';
  // rounds on both sides of the target: the median alone says which side this run landed on
  const withinSpread = hasTarget && measured && spread !== null && meets(spread.min, target) !== meets(spread.max, target);
  return { what, value, target, spread, measured, verdict, withinSpread };
}

/** The lines printed for one judged ratio: the `ratio` line, then a `# ` line with its spread and verdict. */
export function ratioLines(j, label) {
  const spread = j.spread
    ? `spread ${formatNumber(j.spread.min)}..${formatNumber(j.spread.max)} over ${j.spread.n} rounds`
    : 'no per-round ratios given';
  const verdict =
    j.verdict === 'none'
      ? 'no target'
      : j.verdict === 'unmeasured'
        ? 'NOT MEASURED'
        : `target ${describeTarget(j.target)}: ${j.verdict}${j.withinSpread ? ' (target within the spread)' : ''}`;
  return [`ratio ${j.what} ${formatNumber(j.value)}`, `# ${label}: ${j.what} ${spread}; ${verdict}`];
}

/** Sorts judged ratios into the summary's classes; `missed` and `withinSpread` are disjoint, as are `met`. */
export function summarize(judged) {
  const targeted = judged.filter((j) => j.verdict === 'met' || j.verdict === 'missed');
  return {
    met: targeted.filter((j) => j.verdict === 'met' && !j.withinSpread),
    missed: targeted.filter((j) => j.verdict === 'missed' && !j.withinSpread),
    withinSpread: targeted.filter((j) => j.withinSpread),
    untargeted: judged.filter((j) => j.verdict === 'none'),
    unmeasured: judged.filter((j) => j.verdict === 'unmeasured'),
    /** every target the median missed, within the spread or not: what `--strict` fails on */
    medianMissed: targeted.filter((j) => j.verdict === 'missed'),
  };
}

const oneLine = (j) => {
  const spread = j.spread ? ` (spread ${formatNumber(j.spread.min)}..${formatNumber(j.spread.max)})` : '';
  return `${j.what} ${formatNumber(j.value)}, target ${describeTarget(j.target)}${spread}`;
};

/** The summary's `# ` lines. */
export function summaryLines(s) {
  const lines = [
    `# summary: ${s.met.length} targets met, ${s.missed.length} missed, ${s.withinSpread.length} within the spread; ` +
      `${s.untargeted.length} ratios without a target` +
      (s.unmeasured.length ? `; ${s.unmeasured.length} NOT MEASURED` : ''),
  ];
  for (const j of s.missed) lines.push(`#   missed: ${oneLine(j)}`);
  for (const j of s.withinSpread) lines.push(`#   within the spread, median ${j.verdict}: ${oneLine(j)}`);
  for (const j of s.unmeasured) lines.push(`#   not measured: ${j.what} ${formatNumber(j.value)}`);
  return lines;
}
