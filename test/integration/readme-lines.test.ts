// What the README shows a newcomer works as shown: every sriovctl command line in it (cheat sheet, quick start, CI
// hook) is one the program accepts, each CNI config is accepted in the mode it is shown for, the CI hook is valid
// YAML, the lines "on your own NICs" run as written on a stand-in PF through the real executable, and it says where
// the installer image comes from.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../helpers/cli-process';
import { inertProgram } from '../helpers/inert-program';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { parseCniArgs } from '../../src/cni/env';
import { parseNetConf, parseNicConf } from '../../src/cni/netconf';
import { ExitCode } from '../../src/cli/exit-codes';

const README = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

/** The text of section `## heading` (up to the next `## `). */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The fenced blocks of `text` in language `lang`. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

/**
 * Every sriovctl command line shown as code (fenced blocks and `spans`), as its words: from `sriovctl` to the end of
 * the command (a comment, a quote, a bracket); `a|b|c` is each of them, `<command>` a command.
 */
function commandLines(): string[][] {
  const code = [...README.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
  const spans = [...README.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  const lines: string[][] = [];
  // a comment in a block is prose, not a command
  for (const text of [...code.split('\n').map((l) => l.replace(/#.*/, '')), ...spans]) {
    for (const m of text.matchAll(/(?:^|[\s('"])sriovctl ([^#'")\]\n]*)/g)) {
      const words = m[1].trim().split(/\s+/).map((w) => w.replace('<command>', 'status'));
      const alternatives = words.find((w) => w.includes('|'))?.split('|') ?? [null];
      for (const alt of alternatives) lines.push(words.map((w) => (w.includes('|') ? alt! : w)));
    }
  }
  return lines;
}

describe('the README', () => {
  it('every sriovctl command line in it is one the program accepts', async () => {
    const lines = commandLines();
    // the cheat sheet, the quick start and the CI hook are all in there
    for (const shown of ['attach enp3s0f1 node1 --as net1', 'vfs enp3s0f1 8 --driver vfio-pci', 'cluster up --provider kind --agents 2 --vfs 4 --driver vfio-pci', 'cleanup', 'completion fish']) {
      expect(lines.map((l) => l.join(' '))).toContain(shown);
    }
    const rejected: string[] = [];
    for (const words of lines) {
      // `sriovctl cluster` names the command group (its help), not a command line
      if (words.join(' ') === 'cluster') continue;
      await inertProgram()
        .parseAsync(['node', 'sriovctl', ...words])
        // `help <command>` ends in commander's help exit: accepted
        .catch((err: Error & { code?: string }) => /^commander\.help/.test(err.code ?? '') || rejected.push(`sriovctl ${words.join(' ')}: ${err.message}`));
    }
    expect(rejected).toEqual([]);
    // and the check can fail
    await expect(inertProgram().parseAsync(['node', 'sriovctl', 'vfs', 'enp3s0f1', '8', '--drvier', 'vfio-pci'])).rejects.toThrow();
  });

  it('one CNI config for each mode, each accepted in that mode', () => {
    const [vf, device, ...more] = blocks(section('The CNI plugin: one config for each mode'), 'json').map((t) => JSON.parse(t) as Record<string, unknown>);
    expect(more).toEqual([]);
    for (const conf of [vf, device]) {
      expect(conf.type).toBe('sriovctl-cni');
      expect(parseNetConf(conf as never, 'ADD').name).toBe(conf.name);
    }
    const nic = (conf: Record<string, unknown>) => parseNicConf(conf as never, parseCniArgs(''));
    expect(nic(vf)).toMatchObject({ mode: 'vf', selector: { by: 'pci', pci: vf.deviceID }, vf: { vlan: { vlan: 100 }, spoofchk: false, trust: true } });
    expect(nic(device)).toMatchObject({ mode: 'device', selector: { by: 'name', name: device.device } });
  });

  it('the CI hook is valid YAML that gives the NICs back whatever happened', () => {
    const hook = section('Give the NICs back after every CI job');
    const [yaml] = blocks(hook, 'yaml');
    const docs = parseAllDocuments(yaml);
    expect(docs.flatMap((d) => d.errors)).toEqual([]);
    const steps = (docs[0].toJS() as { steps: { run: string; if?: string }[] }).steps;
    expect(steps.at(-1)).toMatchObject({ if: 'always()', run: 'sudo sriovctl cleanup' });
  });

  it("lists the program's exit codes, each once", () => {
    const shown = [...section('Exit codes').matchAll(/\*\*(\d+)\*\*/g)].map((m) => Number(m[1]));
    expect(shown).toEqual(Object.values(ExitCode).sort());
  });

  it('says where the installer image comes from: built by npm run package, published to no registry', () => {
    const line = README.split('\n\n').find((p) => p.includes('installer image'))!;
    expect(line.replace(/\s+/g, ' ')).toMatch(/installer image[^.]*built by `npm run package`[^.]*pushed to no registry/);
  });
});

describe('the README quick start on your own NICs', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  it('runs as written on a stand-in PF (enp3s0f1) and a namespace (node1)', async () => {
    const [, own] = blocks(section('Quick start'), 'sh');
    const [install, ...lines] = own.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
    // sriovctl on PATH first (what npm install -g installs: npm-install-man.test.ts; here the checkout's bin/ runs)
    expect(install).toBe('sudo npm install -g .');
    expect(lines.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual(['sudo sriovctl nics', 'sudo sriovctl attach', 'sudo sriovctl status', 'sudo sriovctl detach']);
    const pf = w.pf('a', '0000:3b:00.0');
    const node = w.netns('node');
    const results = [];
    for (const line of lines) {
      const args = line.split(/\s+/).slice(2).map((a) => (a === 'enp3s0f1' ? pf.name : a === 'node1' ? node : a));
      const r = await w.run(...args);
      expect([r.code, r.stderr], line).toEqual([0, '']);
      results.push(r.stdout.split('\n'));
    }
    const [nics, attach, status, detach] = results;
    expect(nics[1]).toMatch(new RegExp(`^${pf.name} +0000:3b:00.0 +PF +\\S+ +0/8 +\\S+ +home$`));
    expect(attach.slice(0, 2)).toEqual([`${pf.name}: lent to ${node} as ${pf.name}`, `${pf.name}: 4 VFs`]);
    expect(status[1]).toMatch(new RegExp(`^${pf.name} \\(0000:3b:00.0\\) +attach:${node} +lent `));
    expect(detach[0]).toBe(`${pf.name} (0000:3b:00.0): returned as ${pf.name}`);
    expect(w.state(pf.name)).toEqual(pf);
    expect(w.sysfs.sim.read(`${w.sysfs.sim.pciDir('0000:3b:00.0')}/sriov_numvfs`)?.trim()).toBe('0');
  });
});
