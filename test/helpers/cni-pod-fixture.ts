// The usual fixture of a CNI test file: per test, a scratch space, fresh CNI roots (state dir, simulated sysfs),
// a pod namespace and a veth stand-in NIC, all removed after the test whatever its outcome.
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { cniRoots, requireBundle, type CniRoots } from './cni-run';
import { Scratch } from './kernel';
import { standInNic, type NicState } from './lend-fixture';

export interface CniPodFixture {
  s: Scratch;
  roots: CniRoots;
  pod: string;
  nic: NicState;
}

/** Registers the hooks; call the returned function inside a test (or a later beforeEach) for this test's fixture. */
export function useCniPodFixture(): () => CniPodFixture {
  let f: Partial<CniPodFixture> = {};
  beforeAll(requireBundle);
  beforeEach(() => {
    f = {};
    f.s = new Scratch();
    f.roots = cniRoots();
    f.pod = f.s.netns('pod');
    f.nic = standInNic(f.s, 'n0');
  });
  afterEach(() => {
    f.s?.cleanup();
    f.roots?.cleanup();
  });
  return () => f as CniPodFixture;
}
