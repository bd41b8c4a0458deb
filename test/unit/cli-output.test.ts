// Error lines and output streams: one line per error, the kernel's own message only with -v.
import { describe, expect, it } from 'vitest';
import { InvalidArgument, SysError } from '../../src/errors';
import { CliError, ExitCode } from '../../src/cli/exit-codes';
import { Output, exitCodeOf, reasonOf } from '../../src/cli/output';
import { formatTable } from '../../src/cli/table';
import { worst } from '../../src/cli/give-back';

class Capture {
  text = '';
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

describe('reasonOf / exitCodeOf', () => {
  const kernel = new SysError('File exists', { code: 'EEXIST', errno: 17, op: 'RTM_NEWLINK move', kernelMessage: 'Interface name is taken' });

  it("shows a kernel error with its code and the kernel's own sentence; -v adds the operation", () => {
    expect(reasonOf(kernel, false)).toBe('File exists (EEXIST): Interface name is taken');
    expect(reasonOf(kernel, true)).toBe('RTM_NEWLINK move: File exists (EEXIST): Interface name is taken');
    expect(exitCodeOf(kernel)).toBe(ExitCode.failed);
  });

  it('keeps everything on one line', () => {
    expect(reasonOf(new Error('first\n  second\nthird'), false)).toBe('first; second; third');
  });

  it('argument errors are usage errors', () => {
    expect(exitCodeOf(new InvalidArgument('invalid MAC "zz"'))).toBe(ExitCode.usage);
    expect(reasonOf(new InvalidArgument('invalid MAC "zz"'), false)).toBe('invalid MAC "zz"');
    expect(exitCodeOf(new CliError('x', ExitCode.usage))).toBe(ExitCode.usage);
    expect(reasonOf(new CliError('no such thing', ExitCode.failed, 'detail'), true)).toBe('no such thing: detail');
    expect(reasonOf(new CliError('no such thing', ExitCode.failed, 'detail'), false)).toBe('no such thing');
  });

  it('a bug of ours is an internal error, never a usage error; -v shows its stack', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'name')");
    expect(exitCodeOf(bug)).toBe(ExitCode.failed);
    expect(reasonOf(bug, false)).toBe("internal error: Cannot read properties of undefined (reading 'name') (run with -v for its stack)");
    expect(reasonOf(bug, true)).toMatch(/^internal error: TypeError: Cannot read properties[^\n]*\n\s+at /);
    // an Error a step raised with its own sentence is that sentence
    expect(reasonOf(new Error('kubectl exited with 1'), false)).toBe('kubectl exited with 1');
  });

  it('the worst code wins: failed over warnings over ok', () => {
    expect(worst([])).toBe(ExitCode.ok);
    expect(worst([ExitCode.ok, ExitCode.warnings])).toBe(ExitCode.warnings);
    expect(worst([ExitCode.warnings, ExitCode.failed, ExitCode.ok])).toBe(ExitCode.failed);
  });
});

describe('Output', () => {
  it('-q silences result lines, never errors, warnings or JSON; -v adds details on stderr', () => {
    const out = new Capture();
    const err = new Capture();
    const quiet = new Output({ quiet: true, verbose: false }, out, err);
    quiet.line('eth1: returned');
    quiet.detail('step');
    quiet.warn('careful');
    quiet.error('attach eth1 to n1: boom');
    quiet.json([]);
    expect(out.text).toBe('[]\n');
    expect(err.text).toBe('sriovctl: warning: careful\nsriovctl: attach eth1 to n1: boom\n');

    const out2 = new Capture();
    const err2 = new Capture();
    const verbose = new Output({ quiet: false, verbose: true }, out2, err2);
    verbose.line('a');
    verbose.detail('lend:moved');
    expect(out2.text).toBe('a\n');
    expect(err2.text).toBe('  lend:moved\n');
  });

  it('formats aligned columns', () => {
    expect(formatTable(['NIC', 'OWNER'], [['ens1f0', 'attach:n1'], ['x', 'cni:abc/net1']])).toBe(
      'NIC     OWNER\nens1f0  attach:n1\nx       cni:abc/net1',
    );
  });
});
