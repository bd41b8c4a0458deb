// A VFIO user of a VF, as QEMU or DPDK holds one: tools/vfio-hold.py with the VF's group and device fd open.
//
//   const holder = await holdVf(ctx, vf);   // vf: { bdf, group } (IgbPf.vfs()); killed after the scenario
//   holder.pid; await holder.stop();
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { poll } = require('./shell');
const { expect } = require('./expect');

const HOLDER = path.join(__dirname, '..', 'tools', 'vfio-hold.py');
// Without interrupt remapping (the lab's VT-d runs intremap=off) type1 refuses a container unless this is set.
const UNSAFE_INTERRUPTS = '/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts';

/** Start a VFIO user of `vf` (group and device fd open); killed after the scenario. Resolves once it holds them. */
async function holdVf(ctx, vf) {
  const saved = fs.readFileSync(UNSAFE_INTERRUPTS, 'utf8').trim();
  fs.writeFileSync(UNSAFE_INTERRUPTS, '1');
  ctx.defer(() => fs.writeFileSync(UNSAFE_INTERRUPTS, saved === 'Y' ? '1' : '0'));
  const child = spawn('python3', [HOLDER, `/dev/vfio/${vf.group}`, vf.bdf], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  ctx.defer(stop);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const holding = await poll(() => out.includes('holding') || child.exitCode !== null, { timeoutMs: 20_000, intervalMs: 20 });
  expect(holding && out.includes('holding'), `the VFIO holder did not start: ${out.trim()}`);
  return { pid: child.pid, stop };
}

module.exports = { holdVf };
