// `pid:<pid>` targets are pinned when resolved: the namespace is opened once, through a pidfd, so a pid that exits
// and is handed to another process before the NIC moves cannot redirect the NIC there. Proven in a private pid
// namespace, where the test can make the kernel reuse the very pid (ns_last_pid) without racing anyone.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const REGISTER = path.join(__dirname, '..', 'helpers', 'ts-register.cjs');
const CHILD = path.join(__dirname, 'pid-reuse-child.ts');

describe('pid targets', () => {
  it('a pid reused after resolution still names the namespace of the process that had it', () => {
    const out = execFileSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-r', REGISTER, CHILD], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = JSON.parse(out.trim().split('\n').pop()!);
    // the pid now belongs to a process in another namespace (ours) …
    expect(r.idNow).toEqual(r.own);
    expect(r.idNow).not.toEqual(r.idA);
    // … and the target still is the first process's namespace, both as an identity and when opened to lend into
    expect(r.resolved).toEqual(r.idA);
    expect(r.opened).toEqual(r.idA);
  });
});
