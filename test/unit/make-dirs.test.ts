// makeDirs: `mkdir -p` with one attempt per component, so a path the file system refuses fails at once.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeDirs } from '../../src/util/make-dirs';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'make-dirs-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const code = (fn: () => void): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return undefined;
};

describe('makeDirs', () => {
  it('creates missing parents with the mode given, and accepts what exists', () => {
    const deep = path.join(dir, 'a', 'b', 'c');
    makeDirs(deep, 0o700);
    expect(fs.statSync(deep).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(dir, 'a')).mode & 0o777).toBe(0o700);
    makeDirs(deep, 0o700);
    makeDirs(dir);
  });

  it('a path under /proc (mkdir answers ENOENT although the parent exists) throws ENOENT at once', () => {
    // Node's own recursive mkdir never returns here
    expect(code(() => makeDirs('/proc/sriovctl-nonexistent/a/b', 0o700))).toBe('ENOENT');
  });

  it('a file in the way is an error, not a directory', () => {
    fs.writeFileSync(path.join(dir, 'file'), '');
    expect(code(() => makeDirs(path.join(dir, 'file')))).toBe('EEXIST');
    expect(code(() => makeDirs(path.join(dir, 'file', 'sub')))).toBe('ENOTDIR');
  });
});
