// Every command's help ends with examples (through the real executable), and every example is a command line the
// program accepts: parsed by the real program with each action replaced by a no-op, so an example cannot drift
// from the options it uses.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { assertBuilt, sriovctl } from '../helpers/cli-process';
import { buildProgram } from '../../src/cli/program';
import { EXAMPLES } from '../../src/cli/examples';
import { inertProgram } from '../helpers/inert-program';

const env = { stateDir: '/nonexistent-sriovctl-state', sysfsRoot: '/sys' };

function paths(cmd: Command, path: string[] = []): string[][] {
  return [path, ...cmd.commands.flatMap((c) => paths(c, [...path, c.name()]))];
}

/** The sriovctl words of an example line (`source <(sriovctl completion bash)` → completion bash). */
function argsOf(line: string): string[] {
  const words = line.slice(line.indexOf('sriovctl ') + 'sriovctl '.length).split(/[)>]/)[0].trim();
  return words.split(/\s+/);
}

beforeAll(() => assertBuilt());

describe('examples', () => {
  it('every command has some', () => {
    expect(paths(buildProgram({ exitCode: 0 })).map((p) => p.join(' ')).filter((p) => !EXAMPLES[p])).toEqual([]);
  });

  it.each(paths(buildProgram({ exitCode: 0 })).map((p) => [p.join(' ') || '(the program)', p]))('sriovctl %s --help ends with them', async (_name, path) => {
    const r = await sriovctl(env, [...(path as string[]), '--help']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const shown = r.stdout.slice(r.stdout.indexOf('\nExamples:\n'));
    for (const [line, what] of EXAMPLES[(path as string[]).join(' ')]) expect(shown).toContain(`  # ${what}\n  ${line}\n`);
  });

  it.each(Object.entries(EXAMPLES).flatMap(([path, list]) => list.map(([line]) => [line, path])))('%s parses as a command line of "%s"', async (line, path) => {
    const args = argsOf(line);
    if (path) expect(args.slice(0, path.split(' ').length).join(' ')).toBe(path);
    await expect(inertProgram().parseAsync(['node', 'sriovctl', ...args])).resolves.toBeDefined();
  });
});
