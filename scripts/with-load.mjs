#!/usr/bin/env node
// Runs a command with every core kept busy for its whole duration: `node scripts/with-load.mjs [--max-seconds N]
// [--workers N] -- <command> [args…]`. Tests must hold on a busy machine (kubelet nodes are busy; so is CI); CI
// runs `npm test` under this so a test that only passes on an idle machine fails where it is written.
//
// The load is one spinning worker thread per core (os.availableParallelism()), at the command's own priority.
// Bounded and self-stopping: the workers stop when the command exits, and in any case after --max-seconds
// (default 1800) — each checks its own deadline, so a hung command cannot keep the machine busy forever — and
// being threads of this process, they die with it even on SIGKILL. Exit status: the command's (128 + signal
// number when a signal ended it).
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { constants } from 'node:os';
import { Worker } from 'node:worker_threads';

const USAGE = 'usage: node scripts/with-load.mjs [--max-seconds N] [--workers N] -- <command> [args…]';

function parseArgs(argv) {
  const opts = { maxSeconds: 1800, workers: availableParallelism() };
  let i = 0;
  for (; i < argv.length && argv[i] !== '--'; i++) {
    const flag = argv[i];
    const value = Number(argv[++i]);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} needs a positive whole number`);
    if (flag === '--max-seconds') opts.maxSeconds = value;
    else if (flag === '--workers') opts.workers = value;
    else throw new Error(`unknown option ${flag}`);
  }
  const command = argv.slice(i + 1);
  if (argv[i] !== '--' || command.length === 0) throw new Error('no command after --');
  return { ...opts, command };
}

// Spins in slices of ~50 ms of arithmetic, checking the deadline between slices; the main thread's
// terminate() stops it at once.
const SPIN = `
const { workerData } = require('node:worker_threads');
let x = 0;
while (Date.now() < workerData.deadline) {
  const sliceEnd = Date.now() + 50;
  while (Date.now() < sliceEnd) for (let i = 0; i < 10000; i++) x = (x * 1103515245 + 12345) % 2147483648;
}
`;

function startLoad(workers, maxSeconds) {
  const deadline = Date.now() + maxSeconds * 1000;
  return Array.from({ length: workers }, () => {
    const w = new Worker(SPIN, { eval: true, workerData: { deadline } });
    w.unref(); // the command's exit, not the load, decides when this process ends
    return w;
  });
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (err) {
  console.error(`with-load: ${err.message}\n${USAGE}`);
  process.exit(2);
}

const started = Date.now();
const load = startLoad(opts.workers, opts.maxSeconds);
console.error(`with-load: ${opts.workers} busy threads for at most ${opts.maxSeconds} s while running: ${opts.command.join(' ')}`);
// its own process group, so a signal reaches the whole command (npm does not pass SIGTERM on to vitest)
const child = spawn(opts.command[0], opts.command.slice(1), { stdio: 'inherit', detached: true });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // the group is gone already
    }
  });
}
child.on('error', (err) => {
  console.error(`with-load: cannot run ${opts.command[0]}: ${err.message}`);
  process.exit(127);
});
child.on('exit', async (code, signal) => {
  await Promise.all(load.map((w) => w.terminate()));
  console.error(`with-load: command ended after ${((Date.now() - started) / 1000).toFixed(1)} s (${signal ?? `exit ${code}`}); load stopped`);
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
