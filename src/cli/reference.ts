// The command reference (docs/commands.md) and the man pages (man/sriovctl.1, man/sriovctl-cni.8), made from the
// commander definitions themselves (program.ts, examples.ts) and the plugin's own tables, so they cannot drift:
// `npm run docs` writes them, test/unit/cli-reference.test.ts fails when the committed files differ.
import { Help, type Command } from 'commander';
import { packageVersion } from '../package/version';
import { CNI_ERR } from '../cni/errors';
import { SUPPORTED_VERSIONS } from '../cni/versions';
import { EXAMPLES } from './examples';
import { ExitCode } from './exit-codes';
import { buildProgram } from './program';

/** What each exit code means (exit-codes.ts is the contract; this is its text). */
const EXIT_CODE_TEXT: Record<keyof typeof ExitCode, string> = {
  ok: 'done',
  failed: 'failed: nothing changed, or everything was rolled back',
  usage: 'bad command line',
  warnings: 'done, with warnings (each named on stderr): a NIC returned under a fallback name, a VF count left to put back, …',
  notRoot: 'not run as root: nothing was looked at or changed (help, --help, --version and completion need no root)',
};

/** The variables the CLI reads (flags win over them). */
const CLI_ENVIRONMENT: readonly [string, string][] = [
  ['SRIOVCTL_STATE_DIR', 'the state directory (the ledger, locks, cluster files); default /var/lib/sriovctl'],
  ['SRIOVCTL_SYSFS_ROOT', 'the sysfs root; default /sys'],
  ['SRIOVCTL_RESOLV_CONF', "the resolver configuration whose nameservers' routes make a link the host's uplink; default /etc/resolv.conf"],
  ['SRIOVCTL_SOCKET', "the daemon's socket (daemon, status); default /run/sriovctl/cni.sock"],
];

/** What each CNI error code of the plugin means. */
const CNI_ERROR_TEXT: Record<keyof typeof CNI_ERR, string> = {
  INCOMPATIBLE_VERSION: 'incompatible CNI version',
  INVALID_ENV: 'invalid or missing environment variable (each one named)',
  IO_FAILURE: 'I/O failure: stdin did not reach its end in time',
  DECODING_FAILURE: 'stdin is not a JSON object',
  INVALID_CONFIG: 'invalid network configuration (the field and the reason are named)',
  INVALID_NETNS: "CNI_NETNS is the plugin's own network namespace",
  TRY_AGAIN_LATER: 'device busy: another attachment holds the NIC or its lock; try again later',
  NOT_READY: 'not ready: the state directory is not trusted or not writable, sysfs not readable, the IPAM plugin missing',
  DEVICE_NOT_FOUND: 'the device named by the configuration does not exist',
  DEFAULT_ROUTE_LINK: "refused: the NIC is the host's uplink (allowDefaultRouteLink lends it anyway)",
  LEND_FAILED: 'lending the NIC failed; everything was rolled back',
  POD_CONFIG_FAILED: 'configuring the pod interface failed; IPAM released and the NIC given back',
  IPAM_EXEC_FAILED: 'the IPAM plugin could not be run',
  IPAM_BAD_RESULT: 'the IPAM plugin returned an unusable result',
  GIVE_BACK_FAILED: 'giving the NIC back failed; its record is kept for a retried DEL or sriovctl cleanup',
  CHECK_MISMATCH: 'CHECK: the attachment differs from what is expected',
  NO_RECORD: 'CHECK: no record of this attachment',
  INTERNAL: 'internal error (a bug or a broken installation)',
  CANNOT_START: 'the plugin cannot start: its payload is missing or broken; run sriovctl install-cni again',
};

/** One command as the reference shows it. */
interface CommandDoc {
  path: string;
  usage: string;
  description: string;
  arguments: [string, string][];
  options: [string, string][];
  examples: readonly [string, string][];
}

/** The program as commander defines it (the same one `sriovctl` runs). */
export function programForReference(): Command {
  return buildProgram({ exitCode: ExitCode.ok, stdout: { write: () => true }, stderr: { write: () => true } });
}

function commandDocs(cmd: Command, path: string[] = []): CommandDoc[] {
  const help = new Help();
  const doc: CommandDoc = {
    path: ['sriovctl', ...path].join(' '),
    usage: help.commandUsage(cmd),
    description: cmd.description(),
    arguments: help.visibleArguments(cmd).map((a) => [help.argumentTerm(a), help.argumentDescription(a)]),
    options: help.visibleOptions(cmd).map((o) => [help.optionTerm(o), help.optionDescription(o)]),
    examples: EXAMPLES[path.join(' ')] ?? [],
  };
  return [doc, ...cmd.commands.flatMap((c) => commandDocs(c, [...path, c.name()]))];
}

/** docs/commands.md */
export function commandReference(program: Command = programForReference()): string {
  const [top, ...commands] = commandDocs(program);
  const out = [
    '# Command reference',
    '',
    '<!-- Generated from src/cli/program.ts by `npm run docs`; do not edit (a test compares it). -->',
    '',
    `${top.description}.`,
    '',
    '```',
    `Usage: ${top.usage}`,
    '```',
    '',
    '## Global options',
    '',
    ...table(top.options, ['Option', 'What it does']),
    '## Exit codes',
    '',
    ...table(Object.entries(EXIT_CODE_TEXT).map(([k, text]) => [String(ExitCode[k as keyof typeof ExitCode]), text]), ['Code', 'Meaning']),
    '## Environment',
    '',
    ...table(CLI_ENVIRONMENT.map(([v, text]) => [v, text]), ['Variable', 'Meaning']),
  ];
  for (const c of commands) {
    out.push(`## ${c.path}`, '', `${capitalised(c.description)}.`, '', '```', `Usage: ${c.usage}`, '```', '');
    if (c.arguments.length) out.push('Arguments:', '', ...table(c.arguments, ['Argument', 'What it is']));
    const own = c.options.filter(([term]) => term !== '-h, --help');
    if (own.length) out.push('Options:', '', ...table(own, ['Option', 'What it does']));
    if (c.examples.length) out.push('Examples:', '', '```sh', ...c.examples.flatMap(([line, what]) => [`# ${what}`, line]), '```', '');
  }
  return out.join('\n');
}

function table(rows: [string, string][], head: [string, string]): string[] {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [`| ${head[0]} | ${head[1]} |`, `|---|---|`, ...rows.map(([a, b]) => `| \`${cell(a)}\` | ${cell(b)} |`), ''];
}

function capitalised(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** man/sriovctl.1 */
export function sriovctlManPage(program: Command = programForReference()): string {
  const [top, ...commands] = commandDocs(program);
  const out = [
    ...manHeader('SRIOVCTL', 1, 'sriovctl manual'),
    '.SH NAME',
    `sriovctl \\- ${roff(top.description.charAt(0).toLowerCase() + top.description.slice(1))}`,
    '.SH SYNOPSIS',
    `.B sriovctl`,
    roff(top.usage.replace(/^sriovctl /, '')),
    '.SH DESCRIPTION',
    roff(
      'sriovctl lends NICs (SR-IOV PFs and VFs) to network namespaces and gives them back intact: it writes a durable record of the NIC before it moves it, and every give-back (detach, cleanup, cluster down, the CNI DEL of sriovctl-cni) restores it from that record.',
    ),
    '.SH OPTIONS',
    ...manTerms(top.options),
    '.SH COMMANDS',
  ];
  for (const c of commands) {
    out.push('.SS ' + roff(c.usage), roff(capitalised(c.description)) + '.');
    if (c.arguments.length) out.push(...manTerms(c.arguments));
    out.push(...manTerms(c.options.filter(([term]) => term !== '-h, --help')));
    for (const [line, what] of c.examples) out.push('.PP', roff(`Example (${what}):`), '.RS', '.nf', roff(line), '.fi', '.RE');
  }
  out.push('.SH EXIT STATUS', ...manTerms(Object.entries(EXIT_CODE_TEXT).map(([k, text]) => [String(ExitCode[k as keyof typeof ExitCode]), text])));
  out.push('.SH ENVIRONMENT', ...manTerms(CLI_ENVIRONMENT.map(([v, text]) => [v, text])));
  out.push('.SH SEE ALSO', '.BR sriovctl-cni (8),', '.BR ip-link (8)', '');
  return out.join('\n');
}

/** man/sriovctl-cni.8 */
export function sriovctlCniManPage(): string {
  return [
    ...manHeader('SRIOVCTL-CNI', 8, 'sriovctl manual'),
    '.SH NAME',
    'sriovctl-cni \\- CNI plugin that lends an SR\\-IOV VF or a whole NIC to a pod and gives it back intact',
    '.SH SYNOPSIS',
    '.B sriovctl-cni',
    '< network configuration (JSON), with CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_PATH set',
    '.br',
    '.B sriovctl-cni',
    '[\\-\\-version | \\-\\-help]',
    '.SH DESCRIPTION',
    roff(
      'sriovctl-cni is run by the container runtime (containerd, CRI-O, Multus) as its CNI plugin, with the verbs ADD, DEL, CHECK, STATUS, GC and VERSION. ADD writes a durable record of the NIC before it moves it into the pod; DEL gives it back from that record, restored as it was. Run by a person (no CNI_COMMAND, or --version or --help), it prints its version and the CNI versions it supports to stderr and exits 0.',
    ),
    roff(`CNI versions supported: ${SUPPORTED_VERSIONS.join(', ')}.`),
    '.SH EXIT STATUS',
    roff('0 on success; otherwise the CNI error object on stdout, whose code is one of:'),
    ...manTerms(Object.entries(CNI_ERROR_TEXT).map(([k, text]) => [String(CNI_ERR[k as keyof typeof CNI_ERR]), text])),
    '.SH ENVIRONMENT',
    ...manTerms([
      ['CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_ARGS, CNI_PATH', 'as the CNI specification defines them'],
      ['SRIOVCTL_STATE_DIR', 'the state directory (the ledger); default /var/lib/sriovctl'],
      ['SRIOVCTL_SOCKET', 'the socket of a resident sriovctl daemon the native shim hands calls to; default /run/sriovctl/cni.sock'],
    ]),
    '.SH SEE ALSO',
    '.BR sriovctl (1)',
    '',
  ].join('\n');
}

function manHeader(title: string, section: number, manual: string): string[] {
  return [`.\\" Generated from the sriovctl sources by \`npm run docs\`; do not edit.`, `.TH ${title} ${section} "" "sriovctl ${packageVersion()}" "${manual}"`];
}

function manTerms(rows: [string, string][]): string[] {
  return rows.flatMap(([term, text]) => ['.TP', `.B ${roff(term)}`, roff(text)]);
}

/** Text safe in roff: backslashes and hyphens escaped, no line starting with a control character. */
function roff(text: string): string {
  const escaped = text.replace(/\\/g, '\\e').replace(/-/g, '\\-');
  return /^[.']/.test(escaped) ? `\\&${escaped}` : escaped;
}
