// `npm start` (`sriovctl demo`): the local lab end to end on simulated NICs, with a pod attachment through the real
// sriovctl-cni executable, and nothing left behind.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DemoReport } from '../../src/cluster/lab/demo';
import { findRecords } from '../helpers/engine';
import { isolatedRoots } from '../helpers/lend-fixture';
import { namespacesWith, sriovctl } from './cluster-fixture';

const CNI_BUNDLE = join(__dirname, '..', '..', 'dist', 'sriovctl-cni.bundle.js');

let roots: ReturnType<typeof isolatedRoots>;
beforeEach(() => {
  roots = isolatedRoots();
});
afterEach(() => roots.cleanup());

describe('sriovctl demo', () => {
  it('lends a PF to each agent, attaches a VF to a pod through sriovctl-cni, and brings every NIC back as it was', async () => {
    expect(existsSync(CNI_BUNDLE), 'the CNI plugin is built (npm run build)').toBe(true);
    const r = await sriovctl('demo', '--json');
    const report = JSON.parse(r.stdout) as DemoReport;
    expect(report.errors).toEqual([]);
    expect(report.leftovers).toEqual([]);
    expect(r.code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.nics.map((n) => n.kind)).toEqual(['PF', 'PF', 'VF']);
    for (const n of report.nics) {
      expect(n.back).toBe(true);
      expect(n.after).toEqual(n.before);
    }
    expect(report.nics[2].lentTo).toMatch(new RegExp(`^${report.cluster}-agent-0 → pod ${report.cluster}-pod$`));
    for (const k of ['cluster up', 'pod attach (CNI ADD)', 'pod detach (CNI DEL)', 'cluster down', 'total']) {
      expect(report.timings[k]).toBeGreaterThan(0);
    }
    expect(r.stderr).toMatch(/\] demo: cluster demo-[0-9a-f]{4} on the local provider/);
    expect(namespacesWith(`${report.cluster}-`)).toEqual([]);
    expect(findRecords()).toEqual([]);
    expect(readdirSync(join(roots.stateDir, 'clusters'))).toEqual([]);
  });
});
