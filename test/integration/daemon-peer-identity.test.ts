// The daemon judges the process that connected, read through its pidfd, never whatever holds its pid number now,
// and judges it as it is when judged. Proven in a private pid namespace (./daemon-peer-child.ts), where the test can
// make the kernel hand the caller's very pid to another process without racing anyone. Both ways the daemon gets
// that pidfd: from the socket (SO_PEERPIDFD, Linux 6.5+) and, as on an older kernel, from SO_PEERCRED's pid
// (../helpers/without-peerpidfd.py makes SO_PEERPIDFD fail as it does there).
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const REGISTER = path.join(__dirname, '..', 'helpers', 'ts-register.cjs');
const CHILD = path.join(__dirname, 'daemon-peer-child.ts');
const WITHOUT_PEERPIDFD = path.join(__dirname, '..', 'helpers', 'without-peerpidfd.py');

function judged(which: string, olderKernel: boolean) {
  const run = ['unshare', '--pid', '--fork', '--mount-proc', process.execPath, '-r', REGISTER, CHILD, which];
  const [cmd, ...args] = olderKernel ? ['python3', WITHOUT_PEERPIDFD, ...run] : run;
  const out = execFileSync(cmd, args, {
    encoding: 'utf8',
    timeout: 90_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out.trim().split('\n').pop()!) as {
    fromSocket: boolean;
    first: number;
    now: number;
    declined: number;
    refused: number;
    served: number;
    log: string[];
  };
}

describe.each([
  { way: 'SO_PEERPIDFD', olderKernel: false },
  { way: 'a pidfd opened from SO_PEERCRED\'s pid (a kernel without SO_PEERPIDFD)', olderKernel: true },
])('whom the daemon judges, its pidfd of the caller from $way', ({ olderKernel }) => {
  it('a capability-less caller that exited, its pid now a root process with every capability: not served', () => {
    const r = judged('reused', olderKernel);
    expect(r.fromSocket).toBe(!olderKernel);
    expect(r.now).toBe(r.first); // the pid is the other process's now
    expect(r.served, r.log.join('\n')).toBe(0);
    expect(r.declined + r.refused).toBe(1);
    expect(r.log.join('\n')).toMatch(/exited|no peer credentials|lacks CAP_NET_ADMIN|does not hold the connection/);
  });

  it('a caller that could do the work itself and stays connected: served', () => {
    const r = judged('stays', olderKernel);
    expect(r.fromSocket).toBe(!olderKernel);
    expect(r.served, r.log.join('\n')).toBe(1);
    expect(r.declined + r.refused).toBe(0);
  });

  it('a caller that connected from the daemon\'s network namespace and then left it: judged where it is, not served', () => {
    const r = judged('setns', olderKernel);
    expect(r.fromSocket).toBe(!olderKernel);
    expect(r.now).toBe(r.first);
    expect(r.served).toBe(0);
    expect(r.declined).toBe(1);
    expect(r.log.join('\n')).toContain(`pid ${r.first} is in another network namespace`);
  });
});
