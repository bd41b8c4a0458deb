// The per-test world of the CNI tests, set up before and removed after every test of a file: a scratch prefix
// (namespaces, links), a state dir and simulated sysfs tree, optionally a temp dir (host-local's data dir, …), and
// for most tests a pod namespace with one stand-in NIC to lend into it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { cniRoots, requireBundle, type CniRoots } from './cni-run';
import { Scratch } from './kernel';
import { standInNic, type NicState } from './lend-fixture';

export interface CniWorld {
  s: Scratch;
  roots: CniRoots;
  /** A temp dir of the test's own ('' unless asked for). */
  dir: string;
}

export interface CniPodWorld extends CniWorld {
  /** A named namespace playing the pod. */
  pod: string;
  /** A veth stand-in NIC in our namespace. */
  nic: NicState;
}

interface WorldOptions {
  /** Make a temp dir with this name prefix. */
  tempDir?: string;
  /** Check the bundle is built first (tests that run the plugin executable). Default true. */
  bundle?: boolean;
}

/** Scratch space and isolated roots for every test; `set` receives each test's world. */
export function useCniWorld(set: (w: CniWorld) => void, opts: WorldOptions = {}): void {
  if (opts.bundle !== false) beforeAll(requireBundle);
  let w: CniWorld | null = null;
  beforeEach(() => {
    const s = new Scratch();
    const dir = opts.tempDir ? mkdtempSync(join(tmpdir(), opts.tempDir)) : '';
    if (dir) s.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    w = { s, roots: cniRoots(), dir };
    set(w);
  });
  afterEach(() => {
    try {
      w?.s.cleanup();
    } finally {
      w?.roots.cleanup();
      w = null;
    }
  });
}

/** useCniWorld, plus a pod namespace and a stand-in NIC (named with `nicSuffix`). */
export function useCniPodWorld(set: (w: CniPodWorld) => void, nicSuffix: string, opts: WorldOptions = {}): void {
  useCniWorld((w) => set({ ...w, pod: w.s.netns('pod'), nic: standInNic(w.s, nicSuffix) }), opts);
}

/** A whole-device-mode config (host-device's `device`) for the test's NIC, its network named after the test. */
export function deviceConf(s: Scratch, nic: NicState, ipam: object, extra: Record<string, unknown> = {}, cniVersion = '1.1.0') {
  return { cniVersion, name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, ipam, ...extra };
}
