// The vfio-pci preflight of cluster up: the driver in the tree the VFs are in, and — on the real /sys only — the
// VFIO container device, usable for reading and writing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { vfioProblems } from '../../src/cluster/orchestration/vfio-preflight';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-vfio-preflight-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('vfioProblems', () => {
  it('names the missing driver directory and the command that loads it', () => {
    expect(vfioProblems({ sysfsRoot: dir })).toEqual([
      `--driver vfio-pci: the vfio-pci driver is not loaded (no ${join(dir, 'bus/pci/drivers/vfio-pci')}): run modprobe vfio-pci`,
    ]);
  });

  it('a tree with the driver passes; its devices are not checked (no real device behind a fake tree)', () => {
    mkdirSync(join(dir, 'bus/pci/drivers/vfio-pci'), { recursive: true });
    expect(vfioProblems({ sysfsRoot: dir, device: join(dir, 'missing') })).toEqual([]);
  });

  it('on the real /sys: a missing or non-character VFIO device is named', () => {
    const onSys = (device: string) => vfioProblems({ sysfsRoot: '/sys', device }).filter((p) => !p.includes('driver is not loaded'));
    expect(onSys(join(dir, 'vfio'))).toEqual([`--driver vfio-pci: ${join(dir, 'vfio')} does not exist (is the vfio module loaded?)`]);
    writeFileSync(join(dir, 'plain'), '');
    expect(onSys(join(dir, 'plain'))).toEqual([`--driver vfio-pci: ${join(dir, 'plain')} is not a character device`]);
    // a character device we may open read-write stands in for /dev/vfio/vfio
    expect(onSys('/dev/null')).toEqual([]);
  });
});
