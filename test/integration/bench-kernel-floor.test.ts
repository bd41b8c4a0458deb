// The bench's kernel floor (bench/kernel-floor.c) on a real NIC stand-in and namespace of the bench's own world: it
// makes the pair (the NIC into the pod under CNI_IFNAME, and home again under its name) and times each move, which
// the bench prints beside the ratios.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's plain modules have no types
import { withCniWorld } from '../../bench/cni-world.mjs';
// @ts-expect-error: as above
import { buildKernelFloor, describeMoves, kernelFloorPair } from '../../bench/kernel-floor.mjs';

let dir: string;
let program: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-kernel-floor-'));
  program = buildKernelFloor(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const linkNames = (netns?: string): string[] =>
  (JSON.parse(execFileSync('ip', [...(netns ? ['-n', netns] : []), '-j', 'link', 'show'], { encoding: 'utf8' })) as { ifname: string }[]).map((l) => l.ifname);

describe('the kernel floor', () => {
  it('moves the NIC in and back, and times each move', async () => {
    await withCniWorld({ log: () => {} }, async ({ ours, env, call }: any) => {
      const pod = env.CNI_NETNS.split('/').pop();
      const pair = kernelFloorPair(program, call, ours);
      pair();
      pair();
      expect(linkNames()).toContain(ours.device);
      expect(linkNames(pod)).not.toContain(env.CNI_IFNAME);
      for (const which of ['into', 'back']) {
        expect(pair.moves[which]).toHaveLength(2);
        // a move waits out at least part of an RCU grace period: never nothing, never seconds here
        for (const ms of pair.moves[which]) expect(ms).toBeGreaterThan(0.1);
        for (const ms of pair.moves[which]) expect(ms).toBeLessThan(10_000);
      }
      expect(describeMoves(pair.moves)).toMatch(/^into the pod \d+\.\d \/ \d+\.\d \/ \d+\.\d ms \(of 2\), back \d+\.\d \/ \d+\.\d \/ \d+\.\d ms \(of 2\) \(min \/ median \/ max\)$/);
    });
  });

  it('says so when no move was timed', () => {
    expect(describeMoves({ into: [], back: [3, 1, 2] })).toBe('into the pod none timed, back 1.0 / 2.0 / 3.0 ms (of 3) (min / median / max)');
  });
});
