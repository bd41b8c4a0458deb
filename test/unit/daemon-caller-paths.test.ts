// A caller's view of a call's paths, resolved inside its root (a descriptor of it, as the daemon holds one): the
// daemon's own root shares every path; a root elsewhere shares only what is the same file there. CNI_NETNS as
// /proc/<pid>/ns/net is followed to the namespace only through procfs's own link.
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callPathNotShared } from '../../src/daemon/caller-paths';

const dir = mkdtempSync(join(tmpdir(), 'sriovctl-caller-paths-'));
const fds: number[] = [];
afterAll(() => {
  for (const fd of fds) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

function rootAt(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  fds.push(fd);
  return `/proc/self/fd/${fd}`;
}

/** A pid no process has (the highest the kernel hands out is below it). */
const NO_PID = 4_194_305;

const call = (more: Record<string, string>) => ({ CNI_COMMAND: 'ADD', SRIOVCTL_STATE_DIR: dir, SRIOVCTL_SYSFS_ROOT: '/sys', CNI_PATH: '/usr/lib/cni', ...more });

describe('the paths of a call, in the caller\'s root', () => {
  it('the daemon\'s own root: every path is shared, a runtime\'s netns file, a process\'s and a gone process\'s alike', () => {
    const own = rootAt(`/proc/${process.pid}/root`);
    expect(callPathNotShared(call({ CNI_NETNS: `/proc/${process.pid}/ns/net` }), own)).toBeNull();
    expect(callPathNotShared(call({ CNI_NETNS: `/proc/${NO_PID}/ns/net` }), own)).toBeNull();
    expect(callPathNotShared(call({ CNI_NETNS: join(dir, 'no-such-netns') }), own)).toBeNull();
  });

  it('a root elsewhere: its first path that is another file there is named; VERSION names none', () => {
    const fake = join(dir, 'fake-root');
    mkdirSync(join(fake, 'sys'), { recursive: true });
    const other = rootAt(fake);
    // the state dir is missing there, and its closest ancestor there (the fake /) is not the daemon's /tmp…
    expect(callPathNotShared(call({}), other)).toBe(dir);
    expect(callPathNotShared({ CNI_COMMAND: 'VERSION', SRIOVCTL_STATE_DIR: dir, CNI_NETNS: '/x' }, other)).toBeNull();
  });

  it('/proc/<pid>/ns/net there that is no procfs link (an absolute symbolic link, which the kernel would follow in the daemon\'s root) is not the namespace', () => {
    const fake = join(dir, 'fake-proc-root');
    const ns = join(fake, 'proc', String(process.pid), 'ns');
    mkdirSync(ns, { recursive: true });
    symlinkSync(`/proc/${process.pid}/ns/net`, join(ns, 'net'));
    const netns = `/proc/${process.pid}/ns/net`;
    // a call naming no dir (no log dir either): its netns alone is compared
    expect(callPathNotShared({ CNI_COMMAND: 'DEL', SRIOVCTL_CNI_LOG_DIRS: 'none', CNI_NETNS: netns }, rootAt(fake))).toBe(netns);
    // the same call in the daemon's own root: procfs's link, the same namespace
    expect(callPathNotShared({ CNI_COMMAND: 'DEL', SRIOVCTL_CNI_LOG_DIRS: 'none', CNI_NETNS: netns }, rootAt(`/proc/${process.pid}/root`))).toBeNull();
  });
});
