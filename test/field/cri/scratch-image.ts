// An image FROM scratch holding a few static files, built offline with buildah (vfs storage in a temp dir, so
// nothing touches the host's image store) and written as an OCI archive that `ctr images import` reads. A reader
// never sees half an archive: it is written as a temp file and renamed (two test files may build at once).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface ScratchImageSpec {
  /** The reference inside the archive. */
  ref: string;
  /** Where the archive is written. */
  archive: string;
  /** Files of the host copied in: [host path, path in the image]. */
  files: [string, string][];
  entrypoint: string[];
}

/** Build `spec` (files made by `prepare` in a temp dir of its own, if given) into its archive. */
export function buildScratchImage(spec: ScratchImageSpec, prepare?: (work: string) => [string, string][]): void {
  mkdirSync(dirname(spec.archive), { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'sriovctl-image-'));
  try {
    const files = [...spec.files, ...(prepare ? prepare(work) : [])];
    const storage = ['--root', join(work, 'storage'), '--runroot', join(work, 'run'), '--storage-driver', 'vfs'];
    const buildah = (...args: string[]) =>
      execFileSync('buildah', [...storage, ...args], { encoding: 'utf8', stdio: 'pipe', env: { ...process.env, TMPDIR: work } }).trim();
    const ctr = buildah('from', 'scratch');
    for (const [from, to] of files) buildah('copy', ctr, from, to);
    buildah('config', '--entrypoint', JSON.stringify(spec.entrypoint), '--cmd', '', ctr);
    buildah('commit', '-q', ctr, spec.ref);
    const temp = `${spec.archive}.${process.pid}.tmp`;
    buildah('push', '-q', spec.ref, `oci-archive:${temp}:${spec.ref}`);
    renameSync(temp, spec.archive);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
