// Stand-in NICs and an isolated ledger for engine tests: a veth pair whose first end plays the NIC.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openSession } from '../../src/lend';
import { useSession } from './engine';
import { spawnTs, waitForExit } from './ts-child';
import { ip, linkJson, Scratch } from './kernel';
import { loadConfig } from '../../src/config';

const CHILD = join(__dirname, 'lend-child.ts');

/** Point the engine at a fresh state dir and an empty sysfs tree (veth stand-ins have no PCI address). */
export function isolatedRoots(opts: { sysfsRoot?: string } = {}): { stateDir: string; sysfsRoot: string; cleanup(): void } {
  const stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-state-'));
  const emptySysfs = mkdtempSync(join(tmpdir(), 'sriovctl-sysfs-'));
  const sysfsRoot = opts.sysfsRoot ?? emptySysfs;
  const saved = { s: process.env.SRIOVCTL_STATE_DIR, y: process.env.SRIOVCTL_SYSFS_ROOT };
  process.env.SRIOVCTL_STATE_DIR = stateDir;
  process.env.SRIOVCTL_SYSFS_ROOT = sysfsRoot;
  // in-process engine calls (test/helpers/engine.ts) use these roots; child processes get them by environment
  useSession(openSession(loadConfig({}, { stateDir, sysfsRoot })));
  return {
    stateDir,
    sysfsRoot,
    cleanup() {
      useSession(null);
      process.env.SRIOVCTL_STATE_DIR = saved.s;
      process.env.SRIOVCTL_SYSFS_ROOT = saved.y;
      if (saved.s === undefined) delete process.env.SRIOVCTL_STATE_DIR;
      if (saved.y === undefined) delete process.env.SRIOVCTL_SYSFS_ROOT;
      rmSync(stateDir, { recursive: true, force: true });
      rmSync(emptySysfs, { recursive: true, force: true });
    },
  };
}

export interface NicState {
  name: string;
  mac: string;
  mtu: number;
  up: boolean;
  altnames: string[];
}

/** How a link looks, as iproute2 reports it (an independent reader from our own addon). */
export function nicState(name: string, netns?: string): NicState | null {
  const j = linkJson(name, netns);
  if (!j) return null;
  return {
    name: j.ifname,
    mac: j.address,
    mtu: j.mtu,
    up: (j.flags as string[]).includes('UP'),
    altnames: j.altnames ?? [],
  };
}

/** A veth stand-in NIC (first end) with a distinctive MAC and MTU; the peer stays where it was made. */
export function standInNic(s: Scratch, suffix: string, netns?: string): NicState {
  const [nic] = s.veth(suffix, suffix + 'p', netns);
  const nsArgs = netns ? ['-n', netns] : [];
  const mac = '02:5a:' + [0, 0, 0, 0].map(() => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join(':');
  ip(...nsArgs, 'link', 'set', nic, 'address', mac, 'mtu', '1400');
  return nicState(nic, netns)!;
}

/**
 * Run one engine operation in a child process with extra environment (e.g. a failpoint). No deadline of its own:
 * on a busy machine sixteen of these at once take tens of seconds, and that is not a failure (waitForExit's
 * default only guards against a hang).
 */
export async function runChild(job: object, env: NodeJS.ProcessEnv = {}) {
  const child = spawnTs(CHILD, [JSON.stringify(job)], { ...process.env, ...env });
  const done = await waitForExit(child);
  const line = done.stdout.trim().split('\n').pop() || '';
  let parsed: any = null;
  try {
    parsed = line ? JSON.parse(line) : null;
  } catch {
    parsed = null;
  }
  return { ...done, parsed };
}

/**
 * Per-test scratch space and an isolated ledger, created before and removed after every test of the file.
 * Returns accessors, since each test gets fresh ones.
 */
export function useLendScratch(): { scratch(): Scratch; roots(): ReturnType<typeof isolatedRoots>; env(): NodeJS.ProcessEnv } {
  let s: Scratch;
  let r: ReturnType<typeof isolatedRoots>;
  beforeEach(() => {
    s = new Scratch();
    r = isolatedRoots();
  });
  afterEach(() => {
    s.cleanup();
    r.cleanup();
  });
  return {
    scratch: () => s,
    roots: () => r,
    env: () => ({ SRIOVCTL_STATE_DIR: r.stateDir, SRIOVCTL_SYSFS_ROOT: r.sysfsRoot }),
  };
}
