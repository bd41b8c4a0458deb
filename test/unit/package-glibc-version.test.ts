// The packager refuses to ship a glibc older than 2.33 (the launcher's `ld.so --argv0`): the version read from the
// real libc.so.6 and loader it copies for amd64 (this machine's), checked against what the system reports by other
// means, and copies of them whose banner says an older version. (arm64's, Debian's cross libraries, which this
// tier cannot count on: test/field/package-output.test.ts.)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without types
import { checkGlibc, glibcVersionOf } from '../../scripts/package/glibc-version.mjs';

const AMD64 = { libc: '/lib/x86_64-linux-gnu/libc.so.6', loader: '/lib64/ld-linux-x86-64.so.2' };

/** This machine's glibc as getconf reports it ("2.36"). */
const hostGlibc = () => execFileSync('getconf', ['GNU_LIBC_VERSION'], { encoding: 'utf8' }).trim().replace(/^glibc /, '');

describe('the packager’s glibc version check', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sriovctl-glibc-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A copy of `file` whose version banner says `version` (same length) instead. */
  function withVersion(file: string, version: string): string {
    const bytes = readFileSync(file);
    const text = bytes.toString('latin1');
    const m = /(GNU C Library|ld\.so) \([^)]*\) [a-z ]*version (\d+\.\d+)/.exec(text)!;
    const at = m.index + m[0].length - m[2].length;
    expect(version).toHaveLength(m[2].length);
    const copy = join(dir, `${file.split('/').pop()}-${version}`);
    copyFileSync(file, copy);
    writeFileSync(copy, Buffer.concat([bytes.subarray(0, at), Buffer.from(version, 'latin1'), bytes.subarray(at + version.length)]));
    return copy;
  }

  it('reads the version of the real libc.so.6 and loader, as the system reports it', () => {
    for (const f of [AMD64.libc, AMD64.loader]) {
      const v = glibcVersionOf(f);
      expect([f, `${v.major}.${v.minor}`]).toEqual([f, hostGlibc()]);
    }
    expect(checkGlibc([AMD64.loader, AMD64.libc])).toHaveLength(2);
  });

  it('refuses a glibc older than 2.33, naming the file, its version and why', () => {
    const old = withVersion(AMD64.libc, '2.32');
    expect(glibcVersionOf(old)).toMatchObject({ major: 2, minor: 32 });
    expect(() => checkGlibc([AMD64.loader, old])).toThrow(`${old} is glibc 2.32; the payload's launcher runs the executable with ld.so --argv0, which needs glibc >= 2.33`);
    const oldLoader = withVersion(AMD64.loader, '2.31');
    expect(() => checkGlibc([oldLoader, AMD64.libc])).toThrow(`${oldLoader} is glibc 2.31;`);
    // the boundary: 2.33 itself is enough
    expect(() => checkGlibc([withVersion(AMD64.loader, '2.33'), withVersion(AMD64.libc, '2.33')])).not.toThrow();
  });

  it('refuses a loader and a libc of different glibc versions, and a file that is not glibc', () => {
    const libc = withVersion(AMD64.libc, '2.34');
    expect(() => checkGlibc([AMD64.loader, libc])).toThrow(`the C runtime mixes glibc versions (${AMD64.loader}: ${hostGlibc()}, ${libc}: 2.34)`);
    expect(() => checkGlibc(['/bin/true'])).toThrow('/bin/true names no glibc version');
  });
});
