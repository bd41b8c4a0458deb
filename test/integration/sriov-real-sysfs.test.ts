// The sysfs model against the real /sys of this machine (read-only, plus harmless refused writes).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { deviceOfNetdev, getPf, listPfs, netdevsOf, sysfsAt, writeSysfs } from '../../src/sriov';
import { Scratch } from '../helpers/kernel';
import { spawnTs, waitForExit, waitForLine } from '../helpers/ts-child';
import { lockNic, openLedger } from '../../src/ledger';

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
  it('does not keep its process alive: the caller gets ETIMEDOUT and the process exits by itself', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-stuck-'));
    try {
      const fifo = path.join(dir, 'sriov_numvfs');
      execFileSync('mkfifo', [fifo]);
      const child = spawnTs(path.join(__dirname, 'sriov-child.ts'), ['stuck-write', fifo, '200']);
      const exit = await waitForExit(child);
      expect(exit.stdout.trim()).toBe('failed ETIMEDOUT');
      expect(exit.code).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a write in flight when its process is killed', () => {
  it('keeps the NIC locked until the write is done: nobody takes the NIC while the kernel still acts on it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-inflight-'));
    let child: ReturnType<typeof spawnTs> | null = null;
    try {
      const fifo = path.join(dir, 'sriov_numvfs');
      execFileSync('mkfifo', [fifo]);
      const stateDir = path.join(dir, 'state');
      fs.mkdirSync(stateDir, { mode: 0o700 });
      const key = 'pci-0000_3b_00_0';
      child = spawnTs(path.join(__dirname, 'sriov-child.ts'), ['locked-write', fifo, stateDir, key]);
      await waitForLine(child, /^writing$/);
      child.kill('SIGKILL');
      await waitForExit(child);
      // its writer is still blocked in open(2) of the FIFO (a driver still working), and holds the lock
      const ledger = openLedger(stateDir);
      expect(() => lockNic(ledger, key, { timeoutMs: 0 }).release()).toThrow(/busy|held|lock/i);
      // the write completes (a reader comes): the writer exits, and the lock is free
      const reader = fs.openSync(fifo, fs.constants.O_RDONLY);
      try {
        let data = '';
        const buf = Buffer.alloc(16);
        for (let n; (n = fs.readSync(reader, buf)) > 0; ) data += buf.subarray(0, n).toString();
        expect(data).toBe('1');
      } finally {
        fs.closeSync(reader);
      }
      const lock = lockNic(ledger, key, { timeoutMs: 10_000 });
      lock.release();
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // a writer still blocked in open(2) (the test failed half-way) is released by a reader, and ends
      try {
        fs.closeSync(fs.openSync(path.join(dir, 'sriov_numvfs'), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
      } catch {
        // no FIFO
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
