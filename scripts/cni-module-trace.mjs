// The src/ modules one CNI ADD and one DEL load, for comparing checkouts (a refactor's before and after):
//   node scripts/cni-module-trace.mjs [<checkout>] [--json]
// <checkout> (default: this one) must be built (`npm run build`: dist/ and the addon). As root: a namespace playing
// the pod and a veth stand-in NIC (whole-device mode, Debian's static IPAM), a temporary state dir and simulated sysfs
// tree as the integration tests make them; the plugin runs unbundled (dist/cni/main.js) in a child per verb, which
// writes its module cache at exit. Everything made is removed, on failure too. A development tool: never shipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

const args = process.argv.slice(2);
const json = args.includes('--json');
const root = resolve(args.find((a) => !a.startsWith('--')) ?? join(import.meta.dirname, '..'));
const entry = join(root, 'dist', 'cni', 'main.js');
if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build in ${root}`);
if (process.getuid?.() !== 0) throw new Error('run as root (it makes a namespace and a veth pair)');

const prefix = `cmt${randomBytes(2).toString('hex')}`;
const pod = `${prefix}-pod`;
const nic = `${prefix}n0`;
const scratch = mkdtempSync(join(tmpdir(), 'sriovctl-module-trace-'));
const stateDir = join(scratch, 'state');
const sysfsRoot = join(scratch, 'sys');

const ip = (...a) => execFileSync('ip', a, { stdio: ['ignore', 'pipe', 'pipe'] });

/** One verb through the unbundled plugin; the src/ modules (and the addon) it loaded. */
function trace(command) {
  const out = join(scratch, `${command}.json`);
  const child = [
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))));`,
    `Promise.resolve(require(${JSON.stringify(entry)}).main()).then((code) => process.exit(code));`,
  ].join('\n');
  const config = { cniVersion: '1.0.0', name: `net-${prefix}`, type: 'sriovctl-cni', device: nic, ipam: { type: 'static', addresses: [{ address: '10.99.0.5/24' }] } };
  const env = {
    PATH: process.env.PATH,
    SRIOVCTL_STATE_DIR: stateDir,
    SRIOVCTL_SYSFS_ROOT: sysfsRoot,
    CNI_COMMAND: command,
    CNI_CONTAINERID: `ctr-${prefix}`,
    CNI_NETNS: `/var/run/netns/${pod}`,
    CNI_IFNAME: 'net1',
    CNI_PATH: '/usr/lib/cni',
  };
  const r = spawnSync(process.execPath, ['-e', child], { env, input: JSON.stringify(config), encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${command} failed (${r.status ?? r.signal}): ${r.stdout} ${r.stderr}`);
  const loaded = JSON.parse(readFileSync(out, 'utf8'));
  const dist = join(root, 'dist');
  const modules = loaded.filter((f) => f.startsWith(dist + '/') && f.endsWith('.js')).map((f) => `src/${relative(dist, f).replace(/\.js$/, '.ts')}`);
  const addons = loaded.filter((f) => f.endsWith('.node')).map((f) => relative(root, f));
  return { modules: modules.sort(), addons };
}

let result;
try {
  for (const d of ['bus/pci/devices', 'bus/pci/drivers', 'class/net', 'devices/virtual/net']) mkdirSync(join(sysfsRoot, d), { recursive: true });
  writeFileSync(join(sysfsRoot, 'bus/pci/drivers_probe'), '');
  mkdirSync(stateDir, { mode: 0o700 });
  ip('netns', 'add', pod);
  ip('link', 'add', nic, 'type', 'veth', 'peer', 'name', `${nic}p`);
  result = { checkout: root, commit: git('rev-parse', '--short', 'HEAD'), add: trace('ADD'), del: trace('DEL') };
} finally {
  for (const cleanup of [() => ip('link', 'del', nic), () => ip('link', 'del', `${nic}p`), () => ip('netns', 'del', pod)]) {
    try {
      cleanup();
    } catch {
      // already gone (the veth's other end goes with it)
    }
  }
  rmSync(scratch, { recursive: true, force: true });
}

function git(...a) {
  try {
    return execFileSync('git', ['-C', root, ...a], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

if (json) {
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
} else {
  for (const verb of ['add', 'del']) {
    const { modules, addons } = result[verb];
    process.stdout.write(`${verb.toUpperCase()} (${result.commit ?? root}): ${modules.length} src modules, addon ${addons.length ? 'loaded' : 'not loaded'}\n`);
    for (const m of modules) process.stdout.write(`  ${m}\n`);
  }
}
