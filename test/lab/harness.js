#!/usr/bin/env node
// The lab's scenario runner. It runs INSIDE the VM (test/lab/run.sh boots it), as ONE node process: userspace
// there is 10–17× slower than on the host, so a test framework's start-up would cost more than the scenarios.
//
// Every file in test/lab/scenarios/*.js exports an array of scenarios:
//     module.exports = [{ name: 'pf-netns: moved and back', run: async (ctx) => { ... } }, ...];
// A scenario fails by throwing. It registers its own cleanup with ctx.defer(fn) (run in reverse order after
// it, even on failure) and may report measurements with ctx.figure(label, value).
// After each scenario the harness checks that it left no namespace, link, netdevsim device or igb VF behind, and
// that every igb PF is back with its driver and name; a leak fails that scenario and is cleaned up so the next one
// starts from the same clean state.
//
//   node test/lab/harness.js [filter ...]   run the scenarios whose name contains any filter (default: all)
//
// Output: `ok <name> (<ms>)` or `FAIL <name>: <reason>` per scenario, `  # <label>: <value>` for figures,
// and a closing `lab: N passed, M failed`. Exit status 1 when anything failed.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { sh, ip } = require('./lib/shell');
const { igbState, loadIgbDrivers, resetIgbVfs } = require('./lib/igb');

// scenarios/ is the lab every run has; reference/ holds the differential against a reference plugin that only a
// machine with that plugin built can run (npm run test:lab:sriov-cni): never part of the default run
const SCENARIO_DIR = path.join(__dirname, process.env.LAB_SCENARIO_SET === 'reference' ? 'reference' : 'scenarios');
// A bound per scenario, so a hung await cannot stall the rest (a hung *synchronous* call still would; the
// VM-wide SRLAB_TIMEOUT in run.sh is the last resort for that).
const SCENARIO_TIMEOUT_MS = Number(process.env.LAB_SCENARIO_TIMEOUT_MS || 120_000);

function loadScenarios(filters) {
  const all = [];
  for (const file of fs.readdirSync(SCENARIO_DIR).filter((f) => f.endsWith('.js')).sort()) {
    const list = require(path.join(SCENARIO_DIR, file));
    if (!Array.isArray(list)) throw new Error(`${file} must export an array of { name, run }`);
    for (const s of list) {
      if (typeof s?.name !== 'string' || typeof s?.run !== 'function') {
        throw new Error(`${file}: every scenario needs a string name and a run(ctx) function`);
      }
      all.push({ ...s, file });
    }
  }
  const names = new Set();
  for (const s of all) {
    if (names.has(s.name)) throw new Error(`duplicate scenario name: ${s.name}`);
    names.add(s.name);
  }
  return filters.length ? all.filter((s) => filters.some((f) => s.name.includes(f))) : all;
}

/**
 * What a scenario may leave behind, as a comparable snapshot of the VM's state. Read from the file system, not
 * with `ip` (a spawn costs ~30 ms in the VM and this runs twice per scenario): the harness lives in the initial
 * namespace, whose sysfs lists its links; named namespaces are the entries of /run/netns.
 */
function snapshotState() {
  const list = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
  return {
    netns: list('/run/netns'),
    links: list('/sys/class/net'),
    netdevsim: list('/sys/bus/netdevsim/devices'),
    // the real SR-IOV NICs: bdf:driver:netdev-here:sriov_numvfs each
    igb: igbState(),
  };
}

function diffState(before, after) {
  const leaks = [];
  for (const key of Object.keys(before)) {
    const extra = after[key].filter((x) => !before[key].includes(x));
    const gone = before[key].filter((x) => !after[key].includes(x));
    if (extra.length) leaks.push(`${key} left behind: ${extra.join(', ')}`);
    if (gone.length) leaks.push(`${key} missing afterwards: ${gone.join(', ')}`);
  }
  return leaks;
}

/** Remove what a leaking scenario left, so the next scenario starts clean. */
function forceClean(before) {
  const now = snapshotState();
  for (const ns of now.netns.filter((n) => !before.netns.includes(n))) sh('ip', ['netns', 'del', ns], { check: false });
  for (const dev of now.netdevsim.filter((d) => !before.netdevsim.includes(d))) {
    try { fs.writeFileSync('/sys/bus/netdevsim/del_device', dev.replace(/^netdevsim/, '')); } catch { /* best effort */ }
  }
  resetIgbVfs();
  for (const l of snapshotState().links.filter((n) => !before.links.includes(n))) ip('link', 'del', l, { check: false });
}

function makeContext(scenario, index) {
  const deferred = [];
  const figures = [];
  // Short, unique per scenario: names built from it stay within IFNAMSIZ (15).
  const prefix = 'lb' + index.toString(36).padStart(2, '0');
  return {
    ctx: {
      name: scenario.name,
      prefix,
      /** `<prefix><suffix>`, checked against IFNAMSIZ. */
      ifname(suffix) {
        const n = prefix + suffix;
        if (Buffer.byteLength(n) > 15) throw new Error(`interface name too long: ${n}`);
        return n;
      },
      defer(fn) { deferred.push(fn); },
      figure(label, value) { figures.push([label, value]); },
      log(...args) { if (process.env.LAB_VERBOSE === '1') console.log('   ', ...args); },
    },
    deferred,
    figures,
  };
}

async function runOne(scenario, index) {
  const { ctx, deferred, figures } = makeContext(scenario, index);
  const before = snapshotState();
  const t0 = performance.now();
  let failure = null;
  let failureErr = null;
  let timer;
  try {
    await Promise.race([
      Promise.resolve().then(() => scenario.run(ctx)),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${SCENARIO_TIMEOUT_MS} ms`)), SCENARIO_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    failure = describe(err);
    failureErr = err;
  } finally {
    clearTimeout(timer);
  }
  const ms = Math.round(performance.now() - t0);
  const cleanupErrors = [];
  for (const fn of deferred.reverse()) {
    try { await fn(); } catch (err) { cleanupErrors.push(describe(err)); }
  }
  const leaks = diffState(before, snapshotState());
  if (leaks.length) forceClean(before);
  const problems = [failure, ...cleanupErrors.map((e) => `cleanup: ${e}`), ...leaks].filter(Boolean);
  if (problems.length) console.log(`FAIL ${scenario.name}: ${problems.join('; ')}`);
  else console.log(`ok ${scenario.name} (${ms})`);
  for (const [label, value] of figures) console.log(`  # ${label}: ${value}`);
  if (failureErr && process.env.LAB_VERBOSE === '1') console.log(failureErr.stack ?? failureErr);
  return problems.length === 0;
}

/** One line: SysError.describe() when it has it, else the message; never a multi-line stack. */
function describe(err) {
  if (err && typeof err.describe === 'function') return err.describe();
  if (err instanceof Error) return err.message.split('\n')[0];
  return String(err);
}

function prepareKernel() {
  // netdevsim: the kernel's simulated SR-IOV NIC, built by setup.sh. Loaded once for the whole run.
  if (!fs.existsSync('/sys/bus/netdevsim')) sh('modprobe', ['netdevsim']);
  if (!fs.existsSync('/sys/kernel/debug/netdevsim')) {
    sh('mount', ['-t', 'debugfs', 'debugfs', '/sys/kernel/debug'], { check: false });
  }
  fs.mkdirSync('/run/netns', { recursive: true });
  // the emulated Intel 82576 NICs (when run-in-vm.sh plugged them in): igb, igbvf, vfio-pci
  loadIgbDrivers(sh);
}

async function main() {
  const filters = process.argv.slice(2);
  let scenarios;
  try {
    prepareKernel();
    scenarios = loadScenarios(filters);
  } catch (err) {
    console.log(`FAIL harness: ${describe(err)}`);
    console.log('lab: 0 passed, 1 failed');
    process.exitCode = 1;
    return;
  }
  if (scenarios.length === 0) {
    console.log(`FAIL harness: no scenario matches ${filters.join(' ')}`);
    console.log('lab: 0 passed, 1 failed');
    process.exitCode = 1;
    return;
  }
  let passed = 0;
  let failed = 0;
  const msByFile = new Map();
  const started = performance.now();
  for (const [i, s] of scenarios.entries()) {
    const t0 = performance.now();
    if (await runOne(s, i)) passed++;
    else failed++;
    msByFile.set(s.file, (msByFile.get(s.file) ?? 0) + performance.now() - t0);
  }
  // Where the VM's time goes, so the lab can be kept inside its CI budget as scenarios are added.
  const byFile = [...msByFile].map(([f, ms]) => `${f} ${(ms / 1000).toFixed(1)}`).join(', ');
  console.log(`  # time (s): start-up ${(started / 1000).toFixed(1)}, scenarios ${((performance.now() - started) / 1000).toFixed(1)}: ${byFile}`);
  console.log(`lab: ${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

main();
