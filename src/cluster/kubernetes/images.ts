// Airgap: every image a cluster needs reaches its nodes from an archive on this machine, imported by the provider
// (`k3d image import`, `kind load image-archive`); nodes never pull. An image's archive is found, in this order:
//   - the installer image: the OCI archive `npm run package` makes (src/install/installer-image.ts);
//   - `--images <dir>`: one docker-archive or OCI tar per image, named after its reference (archiveFileName);
//   - the image cache `<state dir>/images/`, same naming, filled by earlier online runs (`<runtime> save`).
// Online, an image found nowhere is pulled by the container runtime and saved into the cache, then imported from
// there; with --airgap nothing is pulled and preflight names each missing archive before anything changes.
import { renameSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { SysError } from '../../errors';
import { makeDirs } from '../../util/make-dirs';
import type { ContainerRuntime } from '../tools/container-runtime';
import type { Progress } from '../orchestration/progress';
import type { ToolRunner } from '../tools/run-tool';

/** The image cache of online runs, under the (root-owned, trusted) state dir. */
export function imageCacheDir(stateDir: string): string {
  return join(stateDir, 'images');
}

/**
 * The archive file name of an image reference: the reference with every '/', ':' and '@' turned into '_', plus
 * '.tar' — `ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.4` → `ghcr.io_k8snetworkplumbingwg_multus-cni_v4.1.4.tar`.
 */
export function archiveFileName(ref: string): string {
  return `${ref.replace(/[/:@]/g, '_')}.tar`;
}

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/** Every image the containers of these objects (pods, pod templates, at any depth) run, once each, in order. */
export function imagesOf(objects: unknown[]): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach(walk);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [key, value] of Object.entries(v)) {
      if (CONTAINER_LISTS.has(key) && Array.isArray(value)) {
        for (const c of value) {
          const image = (c as { image?: unknown } | null)?.image;
          if (typeof image === 'string' && image.length > 0) found.add(image);
        }
      }
      walk(value);
    }
  };
  walk(objects);
  return [...found];
}

export interface ImageSources {
  /** --images: a directory of archives; null when not given. */
  imagesDir: string | null;
  cacheDir: string;
  /** The installer image and its archive from `npm run package` (null when there is none). */
  installer: { ref: string; archive: string | null };
}

export interface ImagePlan {
  /** Images with an archive on this machine, in the order asked. */
  found: { ref: string; archive: string }[];
  /** Images with none: where each was looked for. */
  missing: { ref: string; looked: string[] }[];
}

/** Where each image's archive is on this machine (nothing is read but the file system). */
export function planImages(refs: string[], src: ImageSources): ImagePlan {
  const plan: ImagePlan = { found: [], missing: [] };
  for (const ref of [...new Set(refs)]) {
    const looked: string[] = [];
    if (ref === src.installer.ref) {
      if (src.installer.archive && existsSync(src.installer.archive)) {
        plan.found.push({ ref, archive: src.installer.archive });
        continue;
      }
      looked.push(src.installer.archive ?? 'the archive of `npm run package` (dist/pkg/, or SRIOVCTL_INSTALLER_ARCHIVE)');
    }
    const file = archiveFileName(ref);
    const candidates = [...(src.imagesDir ? [join(src.imagesDir, file)] : []), join(src.cacheDir, file)];
    const archive = candidates.find((c) => existsSync(c));
    if (archive) plan.found.push({ ref, archive });
    else plan.missing.push({ ref, looked: [...looked, ...candidates] });
  }
  return plan;
}

/** One preflight line per missing archive. */
export function missingArchiveProblems(missing: ImagePlan['missing'], why: string): string[] {
  return missing.map((m) => `image ${m.ref}: no archive (${why}; looked for ${m.looked.join(', ')})`);
}

/** Whether the runtime's local store has `ref` (`image inspect`, which never touches the network). */
export async function runtimeHasImage(run: ToolRunner, runtime: ContainerRuntime, ref: string): Promise<boolean> {
  try {
    await run(runtime, ['image', 'inspect', '--format', '{{.Id}}', ref], { timeoutMs: 30_000 });
    return true;
  } catch (err) {
    if ((err as SysError).code === 'ENOENT') throw err;
    return false;
  }
}

/** `<runtime> save` arguments writing one image into `file` as a docker-archive (what k3d and kind import). */
export function saveArgs(runtime: ContainerRuntime, ref: string, file: string): string[] {
  return runtime === 'podman' ? ['save', '--format', 'docker-archive', '-o', file, ref] : ['save', '-o', file, ref];
}

/**
 * Online: each image is taken from the runtime's store (pulled first when it is not there) and saved into the
 * cache under its archive name; a partial file never takes that name. Returns the archives, in order.
 */
export async function cacheImages(
  refs: string[],
  ctx: { run: ToolRunner; runtime: ContainerRuntime; cacheDir: string; progress: Progress },
): Promise<{ ref: string; archive: string }[]> {
  makeDirs(ctx.cacheDir, 0o700);
  const saved: { ref: string; archive: string }[] = [];
  for (const ref of refs) {
    if (!(await runtimeHasImage(ctx.run, ctx.runtime, ref))) {
      ctx.progress.step(`images: pulling ${ref} (${ctx.runtime})`);
      await ctx.run(ctx.runtime, ['pull', ref], { timeoutMs: 900_000 });
    }
    const archive = join(ctx.cacheDir, archiveFileName(ref));
    const partial = `${archive}.partial-${process.pid}`;
    try {
      await ctx.run(ctx.runtime, saveArgs(ctx.runtime, ref, partial), { timeoutMs: 600_000 });
      renameSync(partial, archive);
    } finally {
      rmSync(partial, { force: true });
    }
    ctx.progress.step(`images: ${ref} saved to ${archive}`);
    saved.push({ ref, archive });
  }
  return saved;
}
