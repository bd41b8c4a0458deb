// The CNI plugins the way a runtime runs them: the real executable (bin/sriovctl-cni.js, or the real sriov-cni), a
// minimal environment, the network configuration on stdin, a private state dir. Each sriovctl-cni run costs a Node
// start-up, slow in the VM.
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
 * resolves to the same answer (its `child` is the process, to kill). `env` adds to the plugin's environment (e.g. SRIOVCTL_CNI_CARRIER_WAIT_MS).
 */
function pluginFor(ctx, sysfsRoot, env = {}) {
  const stateDir = tempDir(ctx, 'lab-cni-state-');
  const runner = cniRunner(ctx, [process.execPath, PLUGIN], { SRIOVCTL_STATE_DIR: stateDir, SRIOVCTL_SYSFS_ROOT: sysfsRoot, ...env });
  const records = () => {
    const dir = path.join(stateDir, 'records');
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  };
  return { ...runner, records, stateDir };
}

// The real sriov-cni reads the fixed paths /sys and /var/lib/cni/sriov (its cache): it runs in a private mount
// namespace where the fixture's tree is /sys and a temp dir is its cache, the same inputs sriovctl-cni gets
// through SRIOVCTL_SYSFS_ROOT and SRIOVCTL_STATE_DIR. Netlink and the pod's netns path are the real ones.
const IN_PRIVATE_MOUNTS = 'mount --bind "$1" /sys && mkdir -p /var/lib/cni/sriov && mount --bind "$2" /var/lib/cni/sriov && exec "$3"';

/** A runner like pluginFor's for the real sriov-cni binary `bin` (lab/run.sh builds it: LAB_SRIOV_CNI). */
function sriovCniFor(ctx, bin, sysfsRoot) {
  const cacheDir = tempDir(ctx, 'lab-sriov-cni-cache-');
  const runner = cniRunner(ctx, ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', IN_PRIVATE_MOUNTS, 'sh', sysfsRoot, cacheDir, bin], {});
  // what it keeps about attachments: a netconf per container and interface, a file per PCI address it holds
  // (pci/vf_lock/ only has the files it flocks, kept after DEL: no record)
  const records = () =>
    fs.readdirSync(cacheDir, { recursive: true }).filter((f) => !f.startsWith('pci/vf_lock/') && fs.statSync(path.join(cacheDir, f)).isFile());
  return { ...runner, records };
}

function tempDir(ctx, prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  ctx.defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** run/start for the CNI plugin `argv` as a runtime runs it: a minimal environment plus `extraEnv`, the config on stdin. */
function cniRunner(ctx, argv, extraEnv) {
  const invocation = (command, { pod, ifname = 'net1', containerId = 'lab1', config }) => ({
    input: JSON.stringify(config),
    env: {
      PATH: process.env.PATH,
      ...extraEnv,
      CNI_COMMAND: command,
      CNI_CONTAINERID: containerId,
      CNI_NETNS: pod ? `/run/netns/${pod}` : '',
      CNI_IFNAME: ifname,
      CNI_PATH: '/usr/lib/cni',
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
    const { input, env } = invocation(command, opts);
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', input, env });
    return answer(command, r.status, r.stdout, r.stderr);
  };
  const start = (command, opts) => {
    const { input, env } = invocation(command, opts);
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    ctx.defer(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    child.stdin.end(input);
    // 'close', not 'exit': 'exit' can come before the last of stdout was read
    const answered = new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (status) => resolve(answer(command, status, out.stdout, out.stderr)));
    });
    // the process too, for a scenario that kills it
    return Object.assign(answered, { child });
  };
  return { run, start };
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

module.exports = { PLUGIN, pluginFor, sriovCniFor, ok, settable, STATIC_IPAM };
