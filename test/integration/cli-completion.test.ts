// `sriovctl completion bash|zsh|fish` through the real executable: the bash script, sourced into a real bash,
// completes commands, nested commands and options as the program defines them; zsh gets the same through
// bashcompinit; fish gets a line per command. Any other shell is a usage error.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, sriovctl } from '../helpers/cli-process';
import { buildProgram } from '../../src/cli/program';

const env = { stateDir: '/nonexistent-sriovctl-state', sysfsRoot: '/sys' };

/** What bash completes for the words typed so far (the last one is being typed). */
function complete(script: string, words: string[]): string[] {
  const body = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _sriovctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['--norc', '-c', body], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

describe('sriovctl completion', () => {
  let bash: string;
  beforeAll(async () => {
    assertBuilt();
    const r = await sriovctl(env, ['completion', 'bash']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    bash = r.stdout;
  });

  it('bash: every command of the program, then what follows each', () => {
    const program = buildProgram({ exitCode: 0 });
    expect(complete(bash, ['sriovctl', '']).filter((w) => !w.startsWith('-'))).toEqual(program.commands.map((c) => c.name()));
    expect(complete(bash, ['sriovctl', 'clu'])).toEqual(['cluster']);
    expect(complete(bash, ['sriovctl', 'cluster', ''])).toEqual(expect.arrayContaining(['up', 'down', 'status', 'list']));
    expect(complete(bash, ['sriovctl', 'cluster', 'up', '--ag'])).toEqual(['--agents']);
    expect(complete(bash, ['sriovctl', '-v', 'attach', '--dr'])).toEqual(['--driver']);
    expect(complete(bash, ['sriovctl', 'detach', '--'])).toEqual(expect.arrayContaining(['--all', '--target', '--vfio-wait', '--state-dir', '--help']));
  });

  it('zsh: the same functions through bashcompinit', async () => {
    const r = await sriovctl(env, ['completion', 'zsh']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('autoload -U +X bashcompinit && bashcompinit\n');
    expect(r.stdout.replace(/^.*\n/, '').replace('autoload -U +X bashcompinit && bashcompinit\n', '')).toBe(bash.replace(/^.*\n/, ''));
  });

  it('fish: each command with its description, each option where it applies', async () => {
    const r = await sriovctl(env, ['completion', 'fish']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain("complete -c sriovctl -n '__fish_use_subcommand' -a attach -d 'lend a NIC (a PF or a VF) to a network namespace'");
    expect(lines.find((l) => l.includes('-l agents'))).toBe(
      "complete -c sriovctl -n '__fish_seen_subcommand_from cluster; and __fish_seen_subcommand_from up' -l agents -r -d 'number of agents (one PF each; default: 2)'",
    );
  });

  it('another shell: exit 2, naming the choices', async () => {
    const r = await sriovctl(env, ['completion', 'tcsh']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr.split('\n')[0]).toBe("error: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.");
  });
});
