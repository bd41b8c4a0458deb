// The daemon judges the process that connected, read through its pidfd, never whatever holds its pid number now,
// and judges it as it is when judged. Proven in a private pid namespace (./daemon-peer-child.ts), where the test can
// make the kernel hand the caller's very pid to another process without racing anyone.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const REGISTER = path.join(__dirname, '..', 'helpers', 'ts-register.cjs');
const CHILD = path.join(__dirname, 'daemon-peer-child.ts');

function judged(which: string) {
  const out = execFileSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-r', REGISTER, CHILD, which], {
    encoding: 'utf8',
    timeout: 90_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out.trim().split('\n').pop()!) as { first: number; now: number; declined: number; refused: number; served: number; log: string[] };
}

describe('whom the daemon judges', () => {
  it('a capability-less caller that exited, its pid now a root process with every capability: not served', () => {
    const r = judged('reused');
    expect(r.now).toBe(r.first); // the pid is the other process's now
    expect(r.served).toBe(0);
    expect(r.declined + r.refused).toBe(1);
    expect(r.log.join('\n')).toMatch(/exited|no peer credentials|lacks CAP_NET_ADMIN/);
  });

  it('a caller that connected from the daemon\'s network namespace and then left it: judged where it is, not served', () => {
    const r = judged('setns');
    expect(r.now).toBe(r.first);
    expect(r.served).toBe(0);
    expect(r.declined).toBe(1);
    expect(r.log.join('\n')).toContain(`pid ${r.first} is in another network namespace`);
  });
});
