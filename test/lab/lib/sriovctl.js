// The host CLI as a user runs it (`node bin/sriovctl.js …`, the real process), with a private ledger and the
// real /sys. `node` starts slowly in the VM (1–3 s): scenarios call it only where the CLI itself is under test.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { sh } = require('./shell');

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'sriovctl.js');

/** The environment of a CLI run: a private state dir (removed after the scenario) and the real sysfs. */
function cliEnv(ctx, tag = 'cli') {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), `lab-${tag}-state-`));
  ctx.defer(() => fs.rmSync(stateDir, { recursive: true, force: true }));
  return { ...process.env, SRIOVCTL_STATE_DIR: stateDir, SRIOVCTL_SYSFS_ROOT: '/sys' };
}

/** Run `sriovctl …args`; `line` is the one-line account a failed expectation prints. */
function sriovctl(env, ...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, line: `sriovctl ${args.join(' ')} -> ${r.status}: ${(r.stdout + r.stderr).trim()}` };
}

/** The named namespaces (nodes of the local provider) of cluster `name`. */
function nodeNamespaces(name) {
  return sh('ip', ['netns', 'list']).split('\n').map((l) => l.split(' ')[0]).filter((ns) => ns.startsWith(`${name}-`));
}

/**
 * Whether a `cluster down` could still change anything outside the private state dir (which is removed right
 * after): a record (a NIC to give back), a node namespace, or a simulated cluster (its simulated NICs). A scenario
 * that took its cluster down itself leaves none of them, and the safety net need not start the CLI (1–3 s in the VM).
 */
function clusterLeftOver(env, name) {
  if (recordFiles(env).length > 0 || nodeNamespaces(name).length > 0) return true;
  const file = path.join(env.SRIOVCTL_STATE_DIR, 'clusters', name, 'cluster.json');
  if (!fs.existsSync(file)) return false;
  try {
    return Boolean(JSON.parse(fs.readFileSync(file, 'utf8')).sim);
  } catch {
    return true;
  }
}

/** A private ledger, the real sysfs, a cluster name; the cluster is taken down and its nodes removed afterwards. */
function clusterEnv(ctx) {
  const env = cliEnv(ctx, 'cluster');
  const name = `lab${Math.random().toString(16).slice(2, 6)}`;
  // (registered after cliEnv's: runs before the state dir is removed)
  ctx.defer(() => {
    if (!clusterLeftOver(env, name)) return;
    sriovctl(env, 'cluster', 'down', '--name', name, '-q');
    for (const ns of nodeNamespaces(name)) sh('ip', ['netns', 'del', ns]);
  });
  return { env, name };
}

/** The ledger's record files of a CLI environment. */
function recordFiles(env) {
  const dir = path.join(env.SRIOVCTL_STATE_DIR, 'records');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
}

/** The ledger's records of a CLI environment, parsed. */
function records(env) {
  return recordFiles(env).map((f) => JSON.parse(fs.readFileSync(path.join(env.SRIOVCTL_STATE_DIR, 'records', f), 'utf8')));
}

module.exports = { BIN, cliEnv, clusterEnv, sriovctl, recordFiles, records };
