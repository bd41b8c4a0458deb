// Waits with a hang guard, not a measurement: generous bounds for a busy machine, each failure naming what did not
// come. Shared by the tests that watch a daemon serve while another of its calls is held.
import { statSync } from 'node:fs';

/** Until `ready()` holds (up to a minute), else a failure naming `what`. */
export async function until(what: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 1200 && !ready(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!ready()) throw new Error(`gave up waiting: ${what}`);
}

/** The answer, or a failure naming what did not come within `ms`. */
export async function within<T>(what: string, p: Promise<T>, ms = 45_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s (calls held up?)`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether both paths are the same file (device and inode); false when either is missing. */
export function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}
