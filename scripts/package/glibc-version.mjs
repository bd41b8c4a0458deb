// The glibc the payload ships must be >= 2.33: the launcher (native/launcher/oneshot.c) runs the executable with
// `ld.so --argv0 sriovctl-cni`, an option glibc's loader gained in 2.33; an older loader would take `--argv0` for
// the program to run and every CNI call would fail on the node. The version is read from the files themselves,
// whatever their architecture (no need to run a foreign loader): glibc's libc.so.6 says "GNU C Library (…) stable
// release version X.Y." and its loader "ld.so (…) stable release version X.Y.".
import { readFileSync } from 'node:fs';

export const MIN_GLIBC = { major: 2, minor: 33 };

const BANNER = /(GNU C Library|ld\.so) \([^)\n\0]{0,80}\) [a-z ]{0,40}version (\d+)\.(\d+)/;

/** { major, minor, banner } of the glibc file (libc.so.6 or its loader) `file`; throws when it has no banner. */
export function glibcVersionOf(file) {
  const m = BANNER.exec(readFileSync(file).toString('latin1'));
  if (!m) throw new Error(`${file} names no glibc version (no "GNU C Library … version X.Y" or "ld.so … version X.Y" in it): is it glibc's?`);
  return { major: Number(m[2]), minor: Number(m[3]), banner: m[0] };
}

/** Throws, naming the file and both versions, unless every file is glibc >= 2.33, all of one version. */
export function checkGlibc(files) {
  const found = files.map((file) => ({ file, ...glibcVersionOf(file) }));
  for (const f of found) {
    if (f.major < MIN_GLIBC.major || (f.major === MIN_GLIBC.major && f.minor < MIN_GLIBC.minor)) {
      throw new Error(
        `${f.file} is glibc ${f.major}.${f.minor}; the payload's launcher runs the executable with ld.so --argv0, which needs glibc >= ${MIN_GLIBC.major}.${MIN_GLIBC.minor}: build on a newer system (Debian bookworm has 2.36)`,
      );
    }
  }
  const versions = new Set(found.map((f) => `${f.major}.${f.minor}`));
  if (versions.size > 1) throw new Error(`the C runtime mixes glibc versions (${found.map((f) => `${f.file}: ${f.major}.${f.minor}`).join(', ')}): the loader and libc.so.6 must come from one glibc`);
  return found;
}
