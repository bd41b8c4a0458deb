// The pause image for the CRI tests, built offline the way the installer image is: a static binary, packed
// FROM scratch with buildah (vfs storage in a temp dir, so nothing touches the host's image store), written as
// an OCI archive that `ctr images import` reads. Cached under dist/field by the source's hash; two test files
// building at once each write a temp file and rename it, so a reader never sees half an archive.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SOURCE = join(__dirname, 'pause.c');
const CACHE = resolve(__dirname, '..', '..', '..', 'dist', 'field');

export interface PauseImage {
  /** The OCI archive. */
  archive: string;
  /** The reference inside it, for containerd's `sandbox_image`. */
  ref: string;
}

export function pauseImage(): PauseImage {
  const hash = createHash('sha256').update(readFileSync(SOURCE)).digest('hex').slice(0, 12);
  const ref = `localhost/sriovctl-pause:${hash}`;
  const archive = join(CACHE, `sriovctl-pause-${hash}.oci.tar`);
  if (!existsSync(archive)) build(ref, archive);
  return { archive, ref };
}

function build(ref: string, archive: string): void {
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'sriovctl-pause-'));
  try {
    const bin = join(work, 'pause');
    execFileSync('gcc', ['-static', '-Os', '-s', '-o', bin, SOURCE], { stdio: 'pipe' });
    const storage = ['--root', join(work, 'storage'), '--runroot', join(work, 'run'), '--storage-driver', 'vfs'];
    const buildah = (...args: string[]) =>
      execFileSync('buildah', [...storage, ...args], { encoding: 'utf8', stdio: 'pipe', env: { ...process.env, TMPDIR: work } }).trim();
    const ctr = buildah('from', 'scratch');
    buildah('copy', ctr, bin, '/pause');
    buildah('config', '--entrypoint', '["/pause"]', '--cmd', '', ctr);
    buildah('commit', '-q', ctr, ref);
    const temp = `${archive}.${process.pid}.tmp`;
    buildah('push', '-q', ref, `oci-archive:${temp}:${ref}`);
    renameSync(temp, archive);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
