// A VFIO user stand-in for the host tier, as QEMU or a DPDK app holds a VF: a real process with
// /dev/vfio/<group> open. This machine has no VFIO devices, so the process opens a plain file at that path in a
// private mount namespace (a tmpfs over its own /dev): /proc/<pid>/fd then reads /dev/vfio/<group>, exactly what
// src/sriov/vfio-holders.ts looks for, and nothing of it is left on the host once it is killed. The lab
// (test/lab/tools/vfio-hold.py) holds real VFIO groups of igb VFs.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { SimSysfs } from '../../src/sriov/sim';

export interface VfioHolder {
  pid: number;
  /** /dev/vfio/<group> as the process holds it. */
  device: string;
  /** Kill it (SIGKILL) and wait until it is gone. Idempotent. */
  release(): Promise<void>;
}

let reserved = 0;

/**
 * Make the next devices `sim` adds get IOMMU group numbers no other test uses at the same time: holders are found
 * by /dev/vfio/<group> across the whole machine, and every simulated tree numbers its groups from 0, so two tests
 * holding "group 1" of their own trees would see each other's holder. A tree numbers a new group one above its
 * highest: an empty group at this worker's pid × 10⁶ (+ a counter) starts a range of its own.
 */
export function uniqueIommuGroups(sim: SimSysfs): void {
  reserved += 100;
  fs.mkdirSync(sim.p('kernel/iommu_groups', String(process.pid * 1_000_000 + reserved)), { recursive: true });
}

/** Start a process holding /dev/vfio/<group>; resolves once its descriptor is in /proc. */
export async function holdVfioGroup(group: string): Promise<VfioHolder> {
  if (!/^\d+$/.test(group)) throw new Error(`not an IOMMU group: ${group}`);
  const device = `/dev/vfio/${group}`;
  const script = `mount -t tmpfs sriovctl-test-vfio /dev && mkdir /dev/vfio && : > ${device} && exec sleep 3600 3<${device}`;
  // unshare execs sh, which execs sleep: one pid throughout
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  const release = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const end = Date.now() + 60_000; // a hang guard: on a busy machine a process start can take seconds
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the VFIO holder stand-in exited (${child.exitCode}) before holding ${device}`);
    if (readFd(pid) === device) return { pid, device, release };
    if (Date.now() > end) {
      await release();
      throw new Error(`the VFIO holder stand-in did not open ${device}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

function readFd(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/fd/3`);
  } catch {
    return null;
  }
}
