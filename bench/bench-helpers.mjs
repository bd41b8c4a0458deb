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

/**
 * The environment every contender runs with: PATH and what the bench adds, nothing inherited. A shell's
 * NODE_EXTRA_CA_CERTS (set on some build machines) makes every Node start-up read and parse a CA bundle — 80 ms on
 * ours — and NODE_OPTIONS can preload anything: neither is the tool under test, and neither touches the `ip` side.
 */
export function benchEnv(extra = {}) {
  return { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...extra };
}

/** Variables of this shell that would change Node's start-up, for the bench to say it left them out. */
export function droppedStartupVariables() {
  return ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'NODE_COMPILE_CACHE', 'UV_THREADPOOL_SIZE'].filter((v) => process.env[v] !== undefined);
}

/** This shell's NODE_* variables, for a case that calls a plugin as a caller with them would. */
export function callerNodeVariables() {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('NODE_')));
}

/** The ratio of each alternated round (a[i] / b[i]): what ctx.ratio's spread is made of. */
export function roundRatios(a, b) {
  if (a.length !== b.length) throw new Error(`rounds differ in number: ${a.length} against ${b.length}`);
  return a.map((x, i) => x / b[i]);
}

/** Clean-ups of what running benches made, run if the bench is interrupted (SIGINT, SIGTERM: `timeout`, Ctrl-C). */
const interruptCleanups = new Set();
let interruptHandled = false;

/**
 * `body()`, then `cleanup()` — also when the bench is interrupted by a signal, where no `finally` runs: a bench killed
 * with a NIC lent into a namespace of its own left both behind.
 */
export async function withCleanup(cleanup, body) {
  if (!interruptHandled) {
    interruptHandled = true;
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
      process.once(signal, () => {
        for (const c of [...interruptCleanups].reverse()) c();
        process.exit(code);
      });
    }
  }
  interruptCleanups.add(cleanup);
  try {
    return await body();
  } finally {
    interruptCleanups.delete(cleanup);
    cleanup();
  }
}
