// sriovctl-cni the way a runtime runs it: the real executable (bin/sriovctl-cni.js), a minimal environment, the
// network configuration on stdin, a private state dir. Each run costs a Node start-up, slow in the VM.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { expect } = require('./expect');

const PLUGIN = path.join(__dirname, '..', '..', '..', 'bin', 'sriovctl-cni.js');

/**
 * A runner for the plugin against `sysfsRoot` (the real /sys, or a fixture's tree), with its own ledger.
 * `run` waits for the plugin; `start` does not (for a scenario that acts while ADD waits, e.g. for carrier) and
 * resolves to the same answer. `env` adds to the plugin's environment (e.g. SRIOVCTL_CNI_CARRIER_WAIT_MS).
 */
function pluginFor(ctx, sysfsRoot, env = {}) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-cni-state-'));
  ctx.defer(() => fs.rmSync(stateDir, { recursive: true, force: true }));
  const invocation = (command, { pod, ifname = 'net1', containerId = 'lab1', config }) => ({
    input: JSON.stringify(config),
    env: {
      PATH: process.env.PATH,
      SRIOVCTL_STATE_DIR: stateDir,
      SRIOVCTL_SYSFS_ROOT: sysfsRoot,
      CNI_COMMAND: command,
      CNI_CONTAINERID: containerId,
      CNI_NETNS: pod ? `/run/netns/${pod}` : '',
      CNI_IFNAME: ifname,
      CNI_PATH: '/usr/lib/cni',
      ...env,
    },
  });
  const answer = (command, status, stdout, stderr) => {
    let json = null;
    try {
      json = stdout.trim() ? JSON.parse(stdout) : null;
    } catch {
      // reported by the caller's expectations
    }
    ctx.log(command, status, stdout.trim(), stderr.trim());
    return { status, json, stdout, stderr };
  };
  const run = (command, opts) => {
    const { input, env: penv } = invocation(command, opts);
    const r = spawnSync(process.execPath, [PLUGIN], { encoding: 'utf8', input, env: penv });
    return answer(command, r.status, r.stdout, r.stderr);
  };
  const start = (command, opts) => {
    const { input, env: penv } = invocation(command, opts);
    const child = spawn(process.execPath, [PLUGIN], { env: penv, stdio: ['pipe', 'pipe', 'pipe'] });
    ctx.defer(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    child.stdin.end(input);
    // 'close', not 'exit': 'exit' can come before the last of stdout was read
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (status) => resolve(answer(command, status, out.stdout, out.stderr)));
    });
  };
  const records = () => {
    const dir = path.join(stateDir, 'records');
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  };
  return { run, start, records };
}

/** The parsed result of a run that must have succeeded. */
function ok(answer, what) {
  expect(answer.status === 0, `${what} failed: ${answer.stdout.trim() || answer.stderr.trim()}`);
  return answer.json;
}

/** The fields of a VF table entry (lib/iproute2-vf.js) that a CNI config can set. */
function settable(v) {
  return { mac: v.mac, vlan: v.vlan, qos: v.qos, proto: v.vlanProto, spoofchk: v.spoofchk, trust: v.trust, linkState: v.linkState, min: v.minTxRate, max: v.maxTxRate };
}

const STATIC_IPAM = { type: 'static', addresses: [{ address: '10.150.0.7/24', gateway: '10.150.0.1' }] };

module.exports = { PLUGIN, pluginFor, ok, settable, STATIC_IPAM };
