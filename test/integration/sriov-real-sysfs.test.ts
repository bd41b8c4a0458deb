// The sysfs model against the real /sys of this machine (read-only, plus harmless refused writes).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { deviceOfNetdev, getPf, listPfs, netdevsOf, sysfsAt, writeSysfs } from '../../src/sriov';
import { Scratch } from '../helpers/kernel';
import { spawnTs, waitForExit } from '../helpers/ts-child';

/** The machine's own sysfs. */
const SYS = sysfsAt('/sys');
let scratch: Scratch;
let savedRoot: string | undefined;

beforeEach(() => {
  scratch = new Scratch();
  savedRoot = process.env.SRIOVCTL_SYSFS_ROOT;
  delete process.env.SRIOVCTL_SYSFS_ROOT;
});

afterEach(() => {
  scratch.cleanup();
  if (savedRoot !== undefined) process.env.SRIOVCTL_SYSFS_ROOT = savedRoot;
});

describe('the real /sys', () => {
  it('listPfs reads every SR-IOV PF the machine has (possibly none) without error', () => {
    for (const pf of listPfs(SYS)) {
      expect(getPf(SYS, pf.address).address).toBe(pf.address);
      expect(pf.numVfs).toBeGreaterThanOrEqual(0);
    }
  });

  it('every netdev with a device link maps to a device; a virtual one maps to none', () => {
    const [veth] = scratch.veth('sa', 'sb');
    expect(deviceOfNetdev(SYS, veth)).toBeNull();
    expect(deviceOfNetdev(SYS, 'lo')).toBeNull();
    for (const name of fs.readdirSync('/sys/class/net')) {
      const hasDevice = fs.existsSync(path.join('/sys/class/net', name, 'device'));
      const dev = deviceOfNetdev(SYS, name);
      expect(dev !== null).toBe(hasDevice);
      if (dev?.pciAddress) {
        // the device listing finds the netdev back (the namespace sysfs shows is ours)
        expect(netdevsOf(SYS, dev.pciAddress).map((n) => n.name)).toContain(name);
      }
    }
  });

  it('a write the kernel refuses carries the kernel errno (ENODEV from drivers_probe for no such device)', async () => {
    try {
      await writeSysfs('/sys/bus/pci/drivers_probe', 'ffff:ff:1f.7', { timeoutMs: 5000 });
      expect.unreachable();
    } catch (err) {
      expect(isSysError(err, 'ENODEV')).toBe(true);
      expect((err as Error).message).toBe('writing "ffff:ff:1f.7" failed: No such device');
    }
  });
});

describe('a stuck write', () => {
  it('does not keep its process alive: the caller gets TIMEOUT and the process exits by itself', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-stuck-'));
    try {
      const fifo = path.join(dir, 'sriov_numvfs');
      execFileSync('mkfifo', [fifo]);
      const child = spawnTs(path.join(__dirname, 'sriov-child.ts'), ['stuck-write', fifo, '200']);
      const exit = await waitForExit(child);
      expect(exit.stdout.trim()).toBe('failed TIMEOUT');
      expect(exit.code).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
