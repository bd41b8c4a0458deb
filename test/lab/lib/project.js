// The project's own compiled code, as the lab runs it (dist/ and build/Release/sriovctl.node).
// Loaded lazily, so a broken or missing module fails the scenarios that need it rather than the whole run.
'use strict';

const path = require('node:path');

const DIST = path.join(__dirname, '..', '..', '..', 'dist');
const load = (name) => () => require(path.join(DIST, name));

const net = load('net');
const sriov = load('sriov');
/** The project's simulated sysfs tree (src/sriov/sim), for the VF fixture's PCI side. */
const sriovSim = load('sriov/sim');
const errors = load('errors');
const config = load('config');
const lend = load('lend');

/** The sysfs tree the scenario points at (its SRIOVCTL_SYSFS_ROOT, else the real /sys). */
function sysfs() {
  return sriov().sysfsAt(process.env.SRIOVCTL_SYSFS_ROOT || '/sys');
}

/** A lend session over the scenario's configuration (read from its environment, as a front door does); closed after the scenario. */
function session(ctx) {
  const s = lend().openSession(config().loadConfig(process.env));
  ctx.defer(() => s.close());
  return s;
}
/** How the engine finds namespaces (src/lend/namespaces): the initial one among them. */
const namespaces = load('lend/namespaces');

/** An rtnetlink connection (to `ns`, default the caller's namespace) closed after the scenario. */
function rtnl(ctx, ns = null) {
  const conn = net().connect(ns);
  ctx.defer(() => conn.close());
  return conn;
}

/** Open /run/netns/<name> through the addon; closed after the scenario (or earlier by the caller). */
function openNamedNetns(ctx, name) {
  const ns = net().openNetns(`/run/netns/${name}`);
  let open = true;
  const close = () => { if (open) { open = false; ns.close(); } };
  ctx.defer(close);
  return { ns, close };
}

/** The initial namespace, opened the way the engine reaches it (initialRef); closed after the scenario. */
function openInitialNetns(ctx) {
  const ns = net().openNetns(namespaces().initialRef().path);
  ctx.defer(() => ns.close());
  return ns;
}

/** Set environment variables for the rest of the scenario; the old values come back afterwards. */
function withEnv(ctx, vars) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  ctx.defer(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

module.exports = { DIST, net, sriov, sriovSim, errors, sysfs, session, rtnl, openNamedNetns, openInitialNetns, withEnv };
