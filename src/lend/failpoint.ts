// Failpoints: SRIOVCTL_FAILPOINT=<step>[:crash|:error] (read into the configuration at the front door) makes the
// process SIGKILL itself (crash, the default) or throw (error) right after the kernel action of <step> and before
// the record notes it — the widest window for losing a NIC. Steps are listed in steps.ts. Unset (always, outside
// tests): a no-op.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, PauseSpec } from '../config';
import { SysError } from '../errors';
import { sleepSync } from '../util/wait';
import type { Step } from './steps';

export function failpoint(config: Pick<Config, 'failpoint'>, step: Step): void {
  const spec = config.failpoint;
  if (!spec) return;
  const mode = spec.endsWith(':error') ? 'error' : 'crash';
  const name = spec.replace(/:(crash|error)$/, '');
  if (name !== step) return;
  if (mode === 'error') {
    throw new SysError(`failpoint ${step}`, { code: 'FAILPOINT', op: step });
  }
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is delivered asynchronously on some kernels: never continue past a crash failpoint.
  for (;;) sleepSync(1000);
}

/** Where a test may hold a thread (pausePoint). */
export type PausePoint = 'namespace-search' | 'stray-scan:identified';

/** How long a paused thread waits for its release: a test that died must not hold a daemon for ever. */
const PAUSE_LIMIT_MS = 60_000;

/**
 * SRIOVCTL_PAUSE=<point> and SRIOVCTL_PAUSE_DIR=<dir> (read into the configuration at the front door, `pause`) make
 * the thread that reaches <point> — about a `subject` that contains SRIOVCTL_PAUSE_SUBJECT, when that is set —
 * create <dir>/reached and sleep until <dir>/release exists: a test's way to act at a moment that is otherwise a
 * race (while a search is under way; once a namespace is settled and before its links are read) and to see which
 * thread it held. Null (always, outside tests): a no-op.
 */
export function pausePoint(pause: PauseSpec | null | undefined, point: PausePoint, subject = ''): void {
  if (!pause || pause.point !== point || !subject.includes(pause.subject)) return;
  writeFileSync(join(pause.dir, 'reached'), '');
  const end = Date.now() + PAUSE_LIMIT_MS;
  while (!existsSync(join(pause.dir, 'release')) && Date.now() < end) sleepSync(10);
}
