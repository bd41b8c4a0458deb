// `npm run package`: the self-contained executables (dist/pkg/sriovctl-linux-amd64, -arm64), the native CNI shims
// (sriovctl-cni-shim-linux-amd64, -arm64), the daemon's systemd unit and the man pages, their SHA256SUMS, and the multi-arch
// installer image as one OCI archive. Prints each file's size and the wall time.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { buildAddon } from './addon.mjs';
import { buildImage } from './image.mjs';
import { ARCHES } from './runtimes.mjs';
import { buildExecutable } from './sea.mjs';
import { buildShim, DAEMON_UNIT } from './shim.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
const OUT = join(ROOT, 'dist', 'pkg');
const WORK = join(ROOT, 'dist', 'pkg-work');
const started = process.hrtime.bigint();
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

rmSync(WORK, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

// each executable carries its arch's shim (install-cni installs it as the plugin): shims first
const shims = ARCHES.map((arch) => {
  const out = join(OUT, `sriovctl-cni-shim-linux-${arch}`);
  buildShim(arch, out);
  return out;
});
const executables = await Promise.all(
  ARCHES.map(async (arch, i) => {
    const work = join(WORK, arch);
    mkdirSync(work, { recursive: true });
    const addon = join(work, 'sriovctl.node');
    buildAddon(arch, addon);
    const out = join(OUT, `sriovctl-linux-${arch}`);
    await buildExecutable(arch, addon, shims[i], work, version, out);
    return out;
  }),
);
const unit = join(OUT, basename(DAEMON_UNIT));
copyFileSync(DAEMON_UNIT, unit);
// the man pages (made from the command definitions by `npm run docs`), to go beside the executable
const manPages = ['sriovctl.1', 'sriovctl-cni.8'].map((page) => {
  const out = join(OUT, page);
  copyFileSync(join(ROOT, 'man', page), out);
  return out;
});
const image = buildImage(Object.fromEntries(ARCHES.map((a, i) => [a, executables[i]])), version, join(WORK, 'image'));
const files = [...executables, ...shims, unit, ...manPages, image];
writeFileSync(join(OUT, 'SHA256SUMS'), files.map((f) => `${sha256(f)}  ${basename(f)}\n`).join(''));
rmSync(WORK, { recursive: true, force: true });

for (const f of files) console.log(`${basename(f).padEnd(32)} ${(statSync(f).size / 1e6).toFixed(1).padStart(6)} MB`);
const wall = `${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`;
console.log(`package: ${wall}`);
// for npm run bench (bench/package.bench.mjs)
writeFileSync(join(OUT, 'package-time.txt'), `${wall}\n`);

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
