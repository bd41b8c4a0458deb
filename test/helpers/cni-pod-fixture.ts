// The usual fixture of a CNI test file: per test, a scratch space, fresh CNI roots (state dir, simulated sysfs),
// an empty directory of root's, a pod namespace and a veth stand-in NIC, all removed after the test whatever its
// outcome.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { cniRoots, requireBundle, type CniRoots } from './cni-run';
import { Scratch } from './kernel';
import { standInNic, type NicState } from './lend-fixture';

export interface CniPodFixture {
  s: Scratch;
  roots: CniRoots;
  /** an empty directory of root's (mkdtemp) */
  dir: string;
  /** the pod's named namespace */
  pod: string;
  /** the stand-in NIC as it was before the test */
  nic: NicState;
}

/**
 * Registers the hooks; call the returned function inside a test (or a later beforeEach) for this test's fixture.
 * `tag` names the scratch directory and gives the NIC's suffix its first letter.
 */
export function useCniPodFixture(tag = 'nic'): () => CniPodFixture {
  let f: Partial<CniPodFixture> = {};
  beforeAll(requireBundle);
  beforeEach(() => {
    f = {};
    f.s = new Scratch();
    f.roots = cniRoots();
    f.dir = mkdtempSync(join(tmpdir(), `sriovctl-cni-${tag}-`));
    f.pod = f.s.netns('pod');
    f.nic = standInNic(f.s, `${tag[0]}0`);
  });
  afterEach(() => {
    f.s?.cleanup();
    f.roots?.cleanup();
    if (f.dir) rmSync(f.dir, { recursive: true, force: true });
  });
  return () => f as CniPodFixture;
}
