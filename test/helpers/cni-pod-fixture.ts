// Per-test fixture for CNI calls against one stand-in NIC and one pod namespace: scratch names, fresh CNI roots and
// a scratch directory, all made before and removed after every test of the file that calls it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { cniRoots, requireBundle, type CniRoots } from './cni-run';
import { Scratch } from './kernel';
import { standInNic, type NicState } from './lend-fixture';

export interface CniPodScratch {
  s: Scratch;
  roots: CniRoots;
  /** an empty directory of root's (mkdtemp) */
  dir: string;
  /** the pod's named namespace */
  pod: string;
  /** the stand-in NIC as it was before the test */
  nic: NicState;
}

/** Returns an accessor for the current test's fixture. */
export function useCniPodScratch(tag: string): () => CniPodScratch {
  let current: CniPodScratch;
  beforeAll(requireBundle);
  beforeEach(() => {
    const s = new Scratch();
    const roots = cniRoots();
    const dir = mkdtempSync(join(tmpdir(), `sriovctl-cni-${tag}-`));
    current = { s, roots, dir, pod: '', nic: undefined as unknown as NicState };
    current.pod = s.netns('pod');
    current.nic = standInNic(s, `${tag[0]}0`);
  });
  afterEach(() => {
    current.s.cleanup();
    current.roots.cleanup();
    rmSync(current.dir, { recursive: true, force: true });
  });
  return () => current;
}
