// The addon for each architecture, stripped: amd64 is the node-gyp build `npm ci` made with this machine's
// toolchain (rebuilt when native/ is newer); arm64 is cross-compiled by node-gyp with Debian's
// g++-aarch64-linux-gnu against the arm64 runtime's own headers, cached under a key of everything that goes
// into it (a rebuild takes ~15 s on this machine, a cache hit nothing).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from './cache.mjs';
import { NODE_VERSION, runtimeDir } from './runtimes.mjs';
import { isCross, tool } from './toolchain.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
const NODE_GYP = join(ROOT, 'node_modules', '.bin', 'node-gyp');

/** Writes the stripped addon of `arch` to `out`. */
export function buildAddon(arch, out) {
  const built = isCross(arch) ? crossAddon(arch) : hostAddon();
  copyFileSync(built, out);
  execFileSync(tool(arch, 'strip'), ['--strip-unneeded', out]);
}

function hostAddon() {
  const file = join(ROOT, 'build', 'Release', 'sriovctl.node');
  const newestSource = Math.max(...nativeSources().map((f) => statSync(join(ROOT, f)).mtimeMs));
  if (!existsSync(file) || statSync(file).mtimeMs < newestSource) {
    execFileSync(NODE_GYP, ['build', '--loglevel=warn'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return file;
}

/** binding.gyp and every file under native/ (native/tools/ included: binding.gyp builds it too). */
function nativeSources() {
  const files = readdirSync(join(ROOT, 'native'), { recursive: true })
    .map((f) => join('native', String(f)))
    .filter((f) => statSync(join(ROOT, f)).isFile());
  return ['binding.gyp', ...files.sort()];
}

function crossAddon(arch) {
  const compiler = execFileSync(tool(arch, 'g++'), ['--version'], { encoding: 'utf8' }).split('\n')[0];
  const key = createHash('sha256');
  for (const f of nativeSources()) key.update(f).update('\0').update(readFileSync(join(ROOT, f))).update('\0');
  key.update(`${arch}\0${NODE_VERSION}\0${compiler}\0${readFileSync(join(ROOT, 'node_modules', 'node-addon-api', 'package.json'))}`);
  const cached = join(cacheDir(), `sriovctl-${arch}-${key.digest('hex').slice(0, 24)}.node`);
  if (existsSync(cached)) return cached;

  const work = join(cacheDir(), `addon-${arch}-build`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  for (const f of nativeSources()) cpSync(join(ROOT, f), join(work, f), { recursive: true });
  // binding.gyp asks node for node-addon-api's include dir, resolved from the build dir
  symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'));
  const env = { ...process.env, CC: tool(arch, 'gcc'), CXX: tool(arch, 'g++'), LINK: tool(arch, 'g++'), AR: tool(arch, 'ar') };
  execFileSync(NODE_GYP, ['rebuild', `--arch=${arch}`, `--nodedir=${runtimeDir(arch)}`, '-j', '2', '--loglevel=warn'], { cwd: work, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const tmp = `${cached}.tmp-${process.pid}`;
  copyFileSync(join(work, 'build', 'Release', 'sriovctl.node'), tmp);
  renameSync(tmp, cached);
  rmSync(work, { recursive: true, force: true });
  return cached;
}
