// `npm start` (`sriovctl demo`): the local lab end to end on simulated NICs, with a pod attachment through the real
// sriovctl-cni executable, and nothing left behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DemoReport } from '../../src/cluster/lab/demo';
import { findRecords } from '../helpers/engine';
import { isolatedRoots } from '../helpers/lend-fixture';
import { namespacesWith, sriovctl } from './cluster-fixture';
import { sriovctl as sriovctlProcess } from '../helpers/cli-process';

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

  it('npm start: without a state dir given, its own temporary one, removed at the end; the table says what brought each NIC home', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sriovctl-demo-test-'));
    try {
      const env = { stateDir: roots.stateDir, sysfsRoot: roots.sysfsRoot, extra: { SRIOVCTL_STATE_DIR: undefined, TMPDIR: tmp } };
      const r = await sriovctlProcess(env, ['-v', 'demo']);
      expect(r.code, r.stderr).toBe(0);
      const dir = /state dir (\S+) \(removed at the end\)/.exec(r.stderr)?.[1];
      expect(dir?.startsWith(join(tmp, 'sriovctl-demo-'))).toBe(true);
      expect(readdirSync(tmp)).toEqual([]);
      const rows = r.stdout.split('\n').filter((l) => / (PF|VF) /.test(l));
      expect(rows.map((l) => / (PF|VF) /.exec(l)![1])).toEqual(['PF', 'PF', 'VF']);
      expect(rows.slice(0, 2).every((l) => / yes \(cluster down: \d+ ms\)$/.test(l)), rows.join('\n')).toBe(true);
      expect(rows[2]).toMatch(/ yes \(CNI DEL: \d+ ms\)$/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
