// The real sriovctl program with every action replaced by a no-op: parsing a command line with it checks the words
// and options exactly as `sriovctl` would (the preAction checks too) without doing anything, so a command line shown
// to people (an example, a README line) cannot drift from the program.
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program';

export function inertProgram(): Command {
  const program = buildProgram({ exitCode: 0, stdout: { write: () => true }, stderr: { write: () => true } });
  const inert = (c: Command): void => {
    if (c.commands.length === 0) c.action(() => undefined);
    c.commands.forEach(inert);
  };
  inert(program);
  return program;
}
