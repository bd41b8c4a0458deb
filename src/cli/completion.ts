// `sriovctl completion bash|zsh|fish`: a completion script generated from the commander definitions, so it names
// exactly the commands and options the program has. Needs no root: it reads nothing but the program itself.
import { Argument, type Command } from 'commander';
import type { CommandKit } from './command-kit';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

export function registerCompletionCommand(program: Command, kit: CommandKit): void {
  program
    .command('completion')
    .description('print a shell completion script (bash: source <(sriovctl completion bash))')
    .addArgument(new Argument('<shell>', 'the shell').choices([...SHELLS]))
    .action((shell: Shell) => {
      (kit.invocation.stdout ?? process.stdout).write(completionScript(program, shell));
    });
}

/** A command and where it is: its words after `sriovctl` ("cluster up"). */
interface Place {
  path: string[];
  cmd: Command;
}

function places(cmd: Command, path: string[] = []): Place[] {
  return [{ path, cmd }, ...cmd.commands.flatMap((sub) => places(sub, [...path, sub.name()]))];
}

/** The long (else short) flag of each option of `cmd`, --help included. */
function flagsOf(cmd: Command): string[] {
  return [...cmd.options.map((o) => o.long ?? o.short ?? ''), '--help'].filter((f) => f !== '');
}

export function completionScript(program: Command, shell: Shell): string {
  return shell === 'fish' ? fishScript(program) : bashScript(program, shell === 'zsh');
}

function bashScript(program: Command, zsh: boolean): string {
  const all = places(program);
  const globals = flagsOf(program).filter((f) => f !== '--help');
  const cases = (words: (p: Place) => string[]) =>
    all.map((p) => `    ${JSON.stringify(p.path.join(' '))}) echo ${JSON.stringify(words(p).join(' '))} ;;`).join('\n');
  return `# sriovctl ${zsh ? 'zsh' : 'bash'} completion: ${zsh ? 'source <(sriovctl completion zsh) in ~/.zshrc' : 'source <(sriovctl completion bash) in ~/.bashrc'}
${zsh ? 'autoload -U +X bashcompinit && bashcompinit\n' : ''}_sriovctl_subcommands() {
  case "$1" in
${cases((p) => p.cmd.commands.map((c) => c.name()))}
  esac
}
_sriovctl_words() {
  case "$1" in
${cases((p) => [...p.cmd.commands.map((c) => c.name()), ...flagsOf(p.cmd), ...(p.path.length ? globals : [])])}
  esac
}
_sriovctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case " $(_sriovctl_subcommands "$path") " in *" $word "*) path="\${path:+$path }$word" ;; esac
  done
  COMPREPLY=($(compgen -W "$(_sriovctl_words "$path")" -- "$cur"))
}
complete -o default -F _sriovctl sriovctl
`;
}

function fishScript(program: Command): string {
  const lines = ['# sriovctl fish completion: sriovctl completion fish > ~/.config/fish/completions/sriovctl.fish', 'complete -c sriovctl -f'];
  const groups = program.commands.filter((c) => c.commands.length > 0).map((c) => c.name());
  const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  for (const { path, cmd } of places(program)) {
    // where the words of `cmd` apply: after each word of its path; a top-level command not inside a group
    const seen = path.map((w) => `__fish_seen_subcommand_from ${w}`);
    if (path.length === 1 && !groups.includes(path[0])) seen.push(`not __fish_seen_subcommand_from ${groups.join(' ')}`);
    const subs = cmd.commands.map((c) => c.name());
    const condition = path.length === 0 ? '__fish_use_subcommand' : [...seen, ...(subs.length ? [`not __fish_seen_subcommand_from ${subs.join(' ')}`] : [])].join('; and ');
    for (const sub of cmd.commands) lines.push(`complete -c sriovctl -n ${quote(condition)} -a ${sub.name()} -d ${quote(sub.description())}`);
    const optionCondition = path.length === 0 ? '' : ` -n ${quote(seen.join('; and '))}`;
    for (const o of cmd.options) {
      const names = [o.long ? `-l ${o.long.replace(/^--/, '')}` : '', o.short ? `-s ${o.short.replace(/^-/, '')}` : ''].filter(Boolean).join(' ');
      lines.push(`complete -c sriovctl${optionCondition} ${names}${o.required || o.optional ? ' -r' : ''} -d ${quote(o.description)}`);
    }
  }
  return lines.join('\n') + '\n';
}
