// The test rig's daemon (test/helpers/daemon-process.ts) never works on the machine's own state dir: its sweep gives
// back the abandoned records of its state dir, and a call that names none is recorded there.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useDaemons } from '../helpers/daemon-process';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sriovctl-rig-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));
const daemon = useDaemons(() => join(root, 'cni.sock'));

function stateDirOf(pid: number): string | undefined {
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return env.find((v) => v.startsWith('SRIOVCTL_STATE_DIR='))?.slice('SRIOVCTL_STATE_DIR='.length);
}

describe("the test rig's daemon", () => {
  it('keeps its state in a temporary dir of its own, removed when it stops', async () => {
    const d = await daemon();
    const dir = stateDirOf(d.child.pid!);
    expect(dir?.startsWith(join(tmpdir(), 'sriovctl-daemon-state-'))).toBe(true);
    expect(existsSync(dir!)).toBe(true);
    await d.stop();
    expect(existsSync(dir!)).toBe(false);
  });

  it('uses the state dir a test names, and leaves it', async () => {
    const own = join(root, 'state');
    mkdirSync(own, { mode: 0o700 });
    const d = await daemon({ SRIOVCTL_STATE_DIR: own });
    expect(stateDirOf(d.child.pid!)).toBe(own);
    await d.stop();
    expect(existsSync(own)).toBe(true);
  });
});
