// Running the system's own tools (iproute2, modprobe) from lab scenarios: the independent witness that the
// addon's view of the kernel is right. A process spawn costs ~30 ms in the VM, so scenarios batch where they can.
'use strict';

const { spawnSync } = require('node:child_process');

/**
 * Run a command; returns stdout. Throws with the command and its stderr when it fails,
 * unless { check: false } (then the output is returned and the failure ignored). { input } feeds stdin.
 */
function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    input: opts.input,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (r.error) throw r.error;
  if (r.status !== 0 && opts.check !== false) {
    const err = new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || '').trim() || `exit ${r.status}`}`);
    err.stderr = r.stderr;
    err.status = r.status;
    throw err;
  }
  return r.stdout;
}

/** `ip …`; a trailing options object ({ check: false }) is passed to sh(). */
function ip(...args) {
  const opts = typeof args[args.length - 1] === 'object' ? args.pop() : {};
  return sh('ip', args, opts);
}

/** Many `ip` commands in one process (`ip -batch -`): one spawn instead of one per line. */
function ipBatch(lines, opts = {}) {
  if (lines.length === 0) return '';
  return sh('ip', ['-batch', '-'], { ...opts, input: lines.join('\n') + '\n' });
}

/** `ip -j …`, parsed. */
function ipJson(...args) {
  const out = ip('-j', ...args).trim();
  return out ? JSON.parse(out) : [];
}

/** `ip -j -d link show dev <name>` (optionally in a named namespace), or null when it does not exist. */
function linkJson(name, netns) {
  const nsArgs = netns ? ['-n', netns] : [];
  const r = spawnSync('ip', [...nsArgs, '-j', '-d', 'link', 'show', 'dev', name], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return JSON.parse(r.stdout)[0] ?? null;
}

/** What a restore must bring back: name, MAC, MTU and admin state as iproute2 reports them; null when absent. */
function looks(name, netns) {
  const j = linkJson(name, netns);
  return j && { name: j.ifname, mac: j.address, mtu: j.mtu, up: j.flags.includes('UP') };
}

/** `ip netns add <name>`, deleted after the scenario unless it is already gone. */
function tempNetns(ctx, name) {
  ip('netns', 'add', name);
  ctx.defer(() => {
    if (sh('ip', ['netns', 'list']).split('\n').some((l) => l.split(' ')[0] === name)) ip('netns', 'del', name);
  });
  return name;
}

/** Poll `probe` until it returns a truthy value or `timeoutMs` passes; resolves to that value or null. */
async function poll(probe, { timeoutMs = 5000, intervalMs = 2 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() >= end) return null;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

module.exports = { sh, ip, ipBatch, ipJson, linkJson, looks, tempNetns, poll };
