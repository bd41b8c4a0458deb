// The command reference and the man pages are the commander definitions written out: the committed files must be
// exactly what `npm run docs` makes now, every command is in them, and npm installs the man pages.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REFERENCE_FILES } from '../../src/cli/reference-files';
import { commandReference, programForReference, sriovctlManPage } from '../../src/cli/reference';

const ROOT = join(__dirname, '..', '..');

describe('generated reference', () => {
  it.each(Object.keys(REFERENCE_FILES))('%s is what npm run docs makes (run it after changing a command)', (file) => {
    expect(readFileSync(join(ROOT, file), 'utf8')).toBe(REFERENCE_FILES[file]());
  });

  it('every command, its options and examples are in the reference and the man page', () => {
    const program = programForReference();
    const md = commandReference(program);
    const man = sriovctlManPage(program);
    const walk = (cmd: typeof program, path: string[]): void => {
      for (const sub of cmd.commands) {
        const words = [...path, sub.name()];
        expect(md).toContain(`## sriovctl ${words.join(' ')}\n`);
        expect(man).toContain(`.SS sriovctl ${words.join(' ').replace(/-/g, '\\-')}`);
        for (const o of sub.options.filter((x) => !x.hidden)) expect(md).toContain(`\`${o.flags.replace(/\|/g, "\\|")}\``);
        walk(sub, words);
      }
    };
    walk(program, []);
  });

  it('a new option shows up in both (nothing is written by hand)', () => {
    const program = programForReference();
    program.commands.find((c) => c.name() === 'status')!.option('--frobnicate-xyz', 'a test option');
    expect(commandReference(program)).toContain('| `--frobnicate-xyz` | a test option |');
    expect(sriovctlManPage(program)).toContain('.B \\-\\-frobnicate\\-xyz');
  });

  it('npm install -g installs both man pages', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { man: string[] };
    expect(pkg.man).toEqual(['./man/sriovctl.1', './man/sriovctl-cni.8']);
    for (const page of pkg.man) expect(Object.keys(REFERENCE_FILES)).toContain(page.slice(2));
  });
});
