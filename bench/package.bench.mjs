// The self-contained executable (npm run package): its CNI VERSION against a bare `node -e 0`, its ADD+DEL against
// Debian's host-device (the same world as cni.bench.mjs), what its addon cache saves (a first call extracts and
// verifies the addon and compiles; later calls verify the cached copy's hash and load the code cache), and the
// sizes and the package wall time; the plugin as install-cni installs it (the static launcher running the executable
// under its private glibc, for nodes without one): the payload's size per architecture, and what the launcher adds
// to a call it passes on over the plain executable; and that installed plugin (install-cni --no-shim) called with
// this shell's NODE_* variables, as a runtime whose environment has them would call it (the launcher removes them),
// ADD+DEL and VERSION (the launcher answers it itself, without Node) against host-device's. Needs root and `npm run package` (dist/pkg; the arm64 executable and
// the image are reported when present).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv, callerNodeVariables, median, roundRatios } from './bench-helpers.mjs';
import { alternate, CNI_DIR, withCniWorld } from './cni-world.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PKG = join(ROOT, 'dist', 'pkg');
const EXE = join(PKG, 'sriovctl-linux-amd64');
const ROUNDS = Number(process.env.CNI_BENCH_ROUNDS) || 15;
const VERSION_ROUNDS = Number(process.env.CNI_BENCH_VERSION_ROUNDS) || 40;

const mb = (f) => `${(statSync(f).size / 1e6).toFixed(1)} MB`;

export default async function packageBench(ctx) {
  if (!existsSync(EXE)) throw new Error(`${EXE} is missing (npm run package)`);
  for (const f of ['sriovctl-linux-amd64', 'sriovctl-linux-arm64', 'sriovctl-cni-image.oci.tar']) ctx.log(`size ${f}: ${existsSync(join(PKG, f)) ? mb(join(PKG, f)) : 'not built'}`);
  const wall = readWallTime();
  if (wall) ctx.log(`npm run package wall time (last run): ${wall}`);

  await withCniWorld(ctx, ({ scratch, ours, theirs, call, hostDevice }) => {
    const cache = { SRIOVCTL_CACHE_DIR: join(scratch, 'exe-cache') };
    const packaged = (config, command) => call([EXE], config, command, { argv0: 'sriovctl-cni', env: cache });
    const contenders = {
      packaged: () => {
        packaged(ours, 'ADD');
        packaged(ours, 'DEL');
      },
      hostDevice,
    };
    contenders.packaged();
    contenders.hostDevice();
    const times = alternate(contenders, ROUNDS);
    const [mp, mh] = [median(times.packaged), median(times.hostDevice)];
    ctx.log(`ADD+DEL median: packaged sriovctl-cni ${mp.toFixed(1)} ms, host-device ${mh.toFixed(1)} ms (${ROUNDS} alternated pairs)`);
    // the one-shot's targets: it starts like a Go plugin (ADD+DEL within 1.5×, VERSION within 1.0× of host-device's)
    ctx.ratio('sriovctl-cni-packaged/host-device:add+del', mp / mh, { max: 1.5 }, roundRatios(times.packaged, times.hostDevice));

    installedWithCallerEnv(ctx, { scratch, ours, theirs, call });
  });

  const runs = {
    version: () => spawnSync(EXE, [], { argv0: 'sriovctl-cni', env: benchEnv({ CNI_COMMAND: 'VERSION' }), input: '{"cniVersion":"1.1.0"}' }),
    bare: () => spawnSync(process.execPath, ['-e', '0'], { env: benchEnv(), input: '{"cniVersion":"1.1.0"}' }),
    hostDevice: () => spawnSync(join(CNI_DIR, 'host-device'), [], { env: benchEnv({ CNI_COMMAND: 'VERSION' }), input: '{"cniVersion":"1.0.0"}' }),
  };
  if (runs.version().status !== 0) throw new Error('the packaged sriovctl-cni VERSION failed');
  runs.bare();
  const vt = alternate(runs, VERSION_ROUNDS);
  const [mv, mn] = [median(vt.version), median(vt.bare)];
  ctx.log(`VERSION median: packaged sriovctl-cni ${mv.toFixed(1)} ms, node -e 0 ${mn.toFixed(1)} ms, host-device ${median(vt.hostDevice).toFixed(2)} ms (${VERSION_ROUNDS} alternated rounds)`);
  ctx.ratio('sriovctl-cni-packaged-version/node-bare', mv / mn, { max: 1.0 }, roundRatios(vt.version, vt.bare));
  ctx.ratio('sriovctl-cni-packaged/host-device:version', mv / median(vt.hostDevice), { max: 1.0 }, roundRatios(vt.version, vt.hostDevice));

  installedPluginBench(ctx);

  // the addon cache: `status` with an empty cache dir each time (extract + hash + compile) against a warm one
  const warmDir = mkdtempSync(join(tmpdir(), 'sriovctl-exe-cache-'));
  try {
    const status = (dir) => {
      const r = spawnSync(EXE, ['status'], { argv0: 'sriovctl', env: benchEnv({ SRIOVCTL_CACHE_DIR: dir, SRIOVCTL_STATE_DIR: join(warmDir, 'state') }) });
      if (r.status !== 0) throw new Error(`packaged status failed: ${r.stderr}`);
    };
    status(join(warmDir, 'cache'));
    let n = 0;
    const st = alternate(
      {
        cold: () => {
          const d = join(warmDir, `cold-${n++}`);
          status(d);
          rmSync(d, { recursive: true, force: true });
        },
        warm: () => status(join(warmDir, 'cache')),
      },
      ROUNDS,
    );
    ctx.log(`packaged sriovctl status median: empty cache dir ${median(st.cold).toFixed(1)} ms, warm ${median(st.warm).toFixed(1)} ms (${ROUNDS} alternated pairs)`);
  } finally {
    rmSync(warmDir, { recursive: true, force: true });
  }
}

/**
 * install-cni of each architecture into a scratch CNI bin dir (arm64 under qemu-user): the payload's size; then what
 * the amd64 launcher adds to a call it passes on to the executable — a verb no runtime sends, answered by Node with
 * an error (the launcher answers VERSION itself) — against the plain executable, alternated.
 */
function installedPluginBench(ctx) {
  const scratch = mkdtempSync(join(tmpdir(), 'sriovctl-bench-install-'));
  try {
    for (const arch of ['amd64', 'arm64']) {
      const bin = join(scratch, arch);
      mkdirSync(bin, { mode: 0o755 });
      const exe = join(PKG, `sriovctl-linux-${arch}`);
      if (!existsSync(exe)) {
        ctx.log(`payload sriovctl.d (${arch}): not measured, ${exe} is not built`);
        continue;
      }
      const args = ['install-cni', '--to', bin];
      const [cmd, argv] = arch === 'amd64' ? [exe, args] : ['qemu-aarch64-static', ['-L', '/usr/aarch64-linux-gnu', '-0', 'sriovctl', exe, ...args]];
      const r = spawnSync(cmd, argv, { argv0: 'sriovctl', env: benchEnv({ SRIOVCTL_CACHE_DIR: join(scratch, `cache-${arch}`) }), encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`install-cni (${arch}) failed: ${r.stderr}`);
      const payload = join(bin, 'sriovctl.d');
      const sizes = (dir) => readdirSync(dir, { recursive: true }).map((f) => statSync(join(dir, String(f)))).filter((st) => st.isFile()).reduce((n, st) => n + st.size, 0);
      const extra = sizes(payload) - statSync(exe).size;
      ctx.log(`payload sriovctl.d (${arch}): ${(sizes(payload) / 1e6).toFixed(1)} MB, of which launcher + private glibc ${(extra / 1e6).toFixed(1)} MB`);
    }
    const launcher = join(scratch, 'amd64', 'sriovctl-cni');
    const unknownVerb = (program, opts = {}) => spawnSync(program, [], { ...opts, env: benchEnv({ CNI_COMMAND: 'NOT-A-VERB', SRIOVCTL_CACHE_DIR: join(scratch, 'cache-plain') }), input: '{"cniVersion":"1.1.0"}', encoding: 'utf8' });
    const runs = { launcher: () => unknownVerb(launcher), plain: () => unknownVerb(EXE, { argv0: 'sriovctl-cni' }) };
    for (const [name, run] of Object.entries(runs)) {
      const r = run();
      if (!/"code":/.test(r.stdout)) throw new Error(`an unknown verb through ${name} gave no CNI error: ${r.stdout} ${r.stderr}`);
    }
    const t = alternate(runs, VERSION_ROUNDS);
    const [ml, mp] = [median(t.launcher), median(t.plain)];
    ctx.log(`an unknown verb (Node's error answer), median: installed launcher + private glibc ${ml.toFixed(1)} ms, plain executable ${mp.toFixed(1)} ms (+${(ml - mp).toFixed(1)} ms, ${VERSION_ROUNDS} alternated pairs)`);
    ctx.ratio('sriovctl-cni-launcher/plain:unknown-verb', ml / mp, { max: 1.3 }, roundRatios(t.launcher, t.plain));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The plugin as install-cni --no-shim installs it, called with this shell's NODE_* variables (NODE_EXTRA_CA_CERTS
 * on our build machines): ADD+DEL and VERSION against host-device's, called with the same, alternated.
 */
function installedWithCallerEnv(ctx, { scratch, ours, theirs, call }) {
  const bin = join(scratch, 'installed');
  mkdirSync(bin, { mode: 0o755 });
  const r = spawnSync(EXE, ['install-cni', '--to', bin, '--no-shim'], { argv0: 'sriovctl', env: benchEnv({ SRIOVCTL_CACHE_DIR: join(scratch, 'install-cache') }), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`install-cni --no-shim failed: ${r.stderr}`);
  const callerEnv = callerNodeVariables();
  ctx.log(`the installed plugin and host-device called with this shell's ${Object.keys(callerEnv).join(', ') || '(no NODE_* variables: as the rest)'}`);
  const opts = { env: callerEnv };
  const plugin = join(bin, 'sriovctl-cni');
  const hostDevice = join(CNI_DIR, 'host-device');
  const pairs = {
    installed: () => {
      call([plugin], ours, 'ADD', opts);
      call([plugin], ours, 'DEL', opts);
    },
    hostDevice: () => {
      call([hostDevice], theirs, 'ADD', opts);
      call([hostDevice], theirs, 'DEL', opts);
    },
  };
  for (const c of Object.values(pairs)) c();
  const t = alternate(pairs, ROUNDS);
  ctx.log(`ADD+DEL median with the caller's NODE_* variables: installed sriovctl-cni ${median(t.installed).toFixed(1)} ms, host-device ${median(t.hostDevice).toFixed(1)} ms (${ROUNDS} alternated pairs)`);
  ctx.ratio('sriovctl-cni-installed/host-device:add+del', median(t.installed) / median(t.hostDevice), { max: 1.5 }, roundRatios(t.installed, t.hostDevice));

  const versions = { installed: () => call([plugin], ours, 'VERSION', opts), hostDevice: () => call([hostDevice], theirs, 'VERSION', opts) };
  for (const c of Object.values(versions)) c();
  const v = alternate(versions, VERSION_ROUNDS);
  ctx.log(`VERSION median with the caller's NODE_* variables: installed sriovctl-cni ${median(v.installed).toFixed(1)} ms, host-device ${median(v.hostDevice).toFixed(2)} ms (${VERSION_ROUNDS} alternated pairs)`);
  ctx.ratio('sriovctl-cni-installed/host-device:version', median(v.installed) / median(v.hostDevice), { max: 1.0 }, roundRatios(v.installed, v.hostDevice));
}

/** The wall time scripts/package/main.mjs recorded, if any. */
function readWallTime() {
  try {
    return readFileSync(join(PKG, 'package-time.txt'), 'utf8').trim();
  } catch {
    return null;
  }
}
