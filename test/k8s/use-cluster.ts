// One cluster per test file: each file pays a cluster start (about a minute on an idle machine), so the tier
// groups its scenarios into few files.
import { afterAll, beforeAll } from 'vitest';
import { Cluster, type ClusterOptions } from './cluster';

/** One cluster for the whole test file (started in beforeAll with the NAD CRD applied, stopped in afterAll). */
export function useCluster(options: ClusterOptions = {}): () => Cluster {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await Cluster.start(options);
    await cluster.applyNadCrd();
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => cluster!;
}
