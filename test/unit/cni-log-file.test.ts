// The rules of src/cni/log-file.ts that need no file: allowed directories, the logFile name check, escaping. The
// files themselves (symlink, FIFO, hard link, foreign owner) are in test/integration/cni-log-file.test.ts.
import { describe, expect, it } from 'vitest';
import { allowedLogDirs, escapeControl, logFileProblem } from '../../src/cni/log-file';

describe('allowedLogDirs', () => {
  it('is /var/log unless the runtime sets SRIOVCTL_CNI_LOG_DIRS', () => {
    expect(allowedLogDirs({})).toEqual(['/var/log']);
    expect(allowedLogDirs({ SRIOVCTL_CNI_LOG_DIRS: '' })).toEqual(['/var/log']);
    expect(allowedLogDirs({ SRIOVCTL_CNI_LOG_DIRS: '/var/log/cni:/run/cni-logs' })).toEqual(['/var/log/cni', '/run/cni-logs']);
  });
  it('ignores entries that are not clean absolute paths (never a relative directory)', () => {
    expect(allowedLogDirs({ SRIOVCTL_CNI_LOG_DIRS: 'logs:/a/../b:/c/:/d//e:/ok' })).toEqual(['/ok']);
  });
});

describe('logFileProblem', () => {
  const dirs = ['/var/log'];
  it('accepts a file directly in an allowed directory', () => {
    expect(logFileProblem('/var/log/sriov-cni.log', dirs)).toBeNull();
  });
  it('refuses relative, unnormalised, directory-like and out-of-place paths', () => {
    for (const p of ['sriov.log', './x', '/var/log/../../etc/passwd', '/var/log//x', '/var/log/./x', '/var/log/', '/', '/var/log/x\0y']) {
      expect(logFileProblem(p, dirs), p).toMatch(/absolute path/);
    }
    for (const p of ['/etc/passwd', '/var/log/sub/x.log', '/var/logx/a', '/tmp/x.log']) {
      expect(logFileProblem(p, dirs), p).toBe('must be a file directly in /var/log');
    }
    expect(logFileProblem('/var/log/x', [])).toBe('must be a file directly in (no allowed directory)');
    expect(logFileProblem('/var/log/' + 'x'.repeat(5000), dirs)).toBe('is longer than PATH_MAX');
  });
});

describe('escapeControl', () => {
  it('writes C0, DEL, C1 and the Unicode line separators as escapes, and nothing else', () => {
    expect(escapeControl('a\nb\rc\td\u0000e\u001bf\u007fg\u0085h\u2028i\u2029j')).toBe('a\\x0ab\\x0dc\\x09d\\x00e\\x1bf\\x7fg\\x85h\\u2028i\\u2029j');
    expect(escapeControl('plain é ü 日本 \\ "quoted"')).toBe('plain é ü 日本 \\ "quoted"');
  });
});
