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

/** A private ledger, the real sysfs, a cluster name; the cluster is taken down and its nodes removed afterwards. */
function clusterEnv(ctx) {
  const env = cliEnv(ctx, 'cluster');
  const name = `lab${Math.random().toString(16).slice(2, 6)}`;
  // (registered after cliEnv's: runs before the state dir is removed)
  ctx.defer(() => {
    sriovctl(env, 'cluster', 'down', '--name', name, '-q');
    for (const line of sh('ip', ['netns', 'list']).split('\n')) {
      const ns = line.split(' ')[0];
      if (ns.startsWith(`${name}-`)) sh('ip', ['netns', 'del', ns]);
    }
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
