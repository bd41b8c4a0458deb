// The pause image for the CRI tests, built offline the way the installer image is: a static binary packed FROM
// scratch (./scratch-image.ts). Cached under dist/field by the source's hash.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildScratchImage } from './scratch-image';

const SOURCE = join(__dirname, 'pause.c');
export const IMAGE_CACHE = resolve(__dirname, '..', '..', '..', 'dist', 'field');

export interface PauseImage {
  /** The OCI archive. */
  archive: string;
  /** The reference inside it, for containerd's `sandbox_image`. */
  ref: string;
}

export function pauseImage(): PauseImage {
  const hash = createHash('sha256').update(readFileSync(SOURCE)).digest('hex').slice(0, 12);
  const ref = `localhost/sriovctl-pause:${hash}`;
  const archive = join(IMAGE_CACHE, `sriovctl-pause-${hash}.oci.tar`);
  if (!existsSync(archive)) build(ref, archive);
  return { archive, ref };
}

function build(ref: string, archive: string): void {
  buildScratchImage({ ref, archive, files: [], entrypoint: ['/pause'] }, (work) => {
    const bin = join(work, 'pause');
    execFileSync('gcc', ['-static', '-Os', '-s', '-o', bin, SOURCE], { stdio: 'pipe' });
    return [[bin, '/pause']];
  });
}
