// The checkers `npm test` runs (npm run check): each rule of the project's own configuration files fails on a
// violation planted in a small tree, names that rule, and passes the same tree's clean files. The configuration is
// copied, not imitated: a rule dropped or loosened in .dependency-cruiser.cjs, eslint.config.mjs or knip.jsonc fails
// here.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const BIN = {
  depcruise: join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'),
  eslint: join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'),
  knip: join(ROOT, 'node_modules', 'knip', 'bin', 'knip.js'),
};

/** Each test starts one to three checker processes; typed linting builds a TypeScript program (slow on a busy machine). */
const SLOW = { timeout: 180_000 };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-checkers-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const compilerOptions = (JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: object }).compilerOptions;
  // unused code is the linters' to find here, not the compiler's
  put('tsconfig.json', JSON.stringify({ compilerOptions: { ...compilerOptions, noUnusedLocals: false, noUnusedParameters: false }, include: ['src/**/*.ts', 'test/**/*.ts'] }));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function put(file: string, text: string): void {
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  writeFileSync(join(dir, file), text);
}

function copyConfig(...files: string[]): void {
  for (const f of files) copyFileSync(join(ROOT, f), join(dir, f));
}

function run(bin: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 170_000, env: { PATH: process.env.PATH, HOME: dir } });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dependency-cruiser (.dependency-cruiser.cjs)', SLOW, () => {
  beforeEach(() => {
    copyConfig('.dependency-cruiser.cjs');
    // a clean stack: native loads the addon, net uses native, the engine uses net, a front door uses the engine's index
    put('src/addon-file.ts', 'export function loadAddonModule(): unknown {\n  return {};\n}\n');
    put('src/errors.ts', 'export class SysError extends Error {}\n');
    put('src/native.ts', "import { loadAddonModule } from './addon-file';\nexport const native = loadAddonModule();\n");
    put('src/net/index.ts', "import { native } from '../native';\nexport const net = native;\n");
    put('src/lend/session.ts', "import { net } from '../net';\nexport const openSession = (): unknown => net;\n");
    put('src/lend/index.ts', "export { openSession } from './session';\n");
    put('src/cli/attach.ts', "import { openSession } from '../lend';\nimport { SysError } from '../errors';\nexport const attach = (): unknown => openSession() ?? new SysError();\n");
    put('build/Release/sriovctl.node', '');
    // one violation of each rule
    put('src/util/plural.ts', "import { attach } from '../cli/attach';\nexport const up = attach;\n");
    put('src/lend/a.ts', "import { b } from './b';\nexport const a = (): unknown => b;\n");
    put('src/lend/b.ts', "import { a } from './a';\nexport const b = (): unknown => a;\n");
    put('src/cli/detach.ts', "import { openSession } from '../lend/session';\nexport const detach = openSession;\n");
    put('src/net/flock.ts', "import { loadAddonModule } from '../addon-file';\nexport const flock = loadAddonModule;\n");
    put('src/net/raw.ts', "// eslint-disable-next-line @typescript-eslint/no-require-imports\nexport const raw: unknown = require('../../build/Release/sriovctl.node');\n");
    put('src/stray/x.ts', "import { SysError } from '../errors';\nexport const x = SysError;\n");
  });

  const PLANTED = [
    'down-only-util src/util/plural.ts -> src/cli/attach.ts',
    'every-file-in-a-layer src/stray/x.ts -> src/errors.ts',
    'front-doors-use-engine-index src/cli/detach.ts -> src/lend/session.ts',
    'no-cycles src/lend/a.ts -> src/lend/b.ts',
    'only-native-loads-addon src/net/flock.ts -> src/addon-file.ts',
    'only-native-loads-addon src/net/raw.ts -> build/Release/sriovctl.node',
  ];

  function violations(): { found: string[] } {
    const r = run(BIN.depcruise, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json']);
    const out = JSON.parse(r.stdout) as { summary: { violations: { from: string; to: string; rule: { name: string } }[] } };
    return { found: out.summary.violations.map((v) => `${v.rule.name} ${v.from} -> ${v.to}`).sort() };
  }

  it('fails on each planted violation, naming its rule, and on nothing else', () => {
    expect(violations().found).toEqual(PLANTED);
    // as `npm run check` runs it: the exit status fails the run
    const r = run(BIN.depcruise, ['src', '--config', '.dependency-cruiser.cjs']);
    expect(r.status).not.toBe(0);
    for (const rule of new Set(PLANTED.map((v) => v.split(' ')[0]))) expect(r.stdout).toContain(`error ${rule}:`);
  });
});

describe('typescript-eslint (eslint.config.mjs)', SLOW, () => {
  /** Lines that end in `// <rule>` must be reported by exactly that rule; every other line must pass. */
  const PLANTED = `import { readFileSync } from 'node:fs'; // @typescript-eslint/no-unused-vars
export async function later(): Promise<number> {
  return 1;
}
export function drop(): void {
  later(); // @typescript-eslint/no-floating-promises
}
export function eachAsync(): void {
  [1].forEach(async () => { await later(); }); // @typescript-eslint/no-misused-promises
}
export async function waitOnNumber(): Promise<void> {
  await 1; // @typescript-eslint/await-thenable
}
export type Verb = 'ADD' | 'DEL' | 'CHECK';
export function code(v: Verb): number {
  switch (v) { // @typescript-eslint/switch-exhaustiveness-check
    case 'ADD':
      return 1;
    case 'DEL':
      return 2;
  }
  return 0;
}
export const path: unknown = require('node:path'); // @typescript-eslint/no-require-imports
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const addon: unknown = require('./build/sriovctl.node'); // no-restricted-syntax
export function open(m: { exports: unknown }): void {
  process.dlopen(m, '/tmp/x.node'); // no-restricted-properties
}
export function say(): void {
  console.log('stdout is the result'); // no-console
}
export function stateDir(): string | undefined {
  return process.env.SRIOVCTL_STATE_DIR; // no-restricted-properties
}
export function cacheHome(): string | undefined {
  const { env } = process; // no-restricted-properties
  return env.XDG_CACHE_HOME;
}
// eslint-disable-next-line no-console
export const quiet = 1;
`;
  const CLEAN = `export async function later(): Promise<number> {
  return 1;
}
export async function kept(): Promise<number> {
  void later();
  return await later();
}
export type Verb = 'ADD' | 'DEL';
export function code(v: Verb): number {
  switch (v) {
    case 'ADD':
      return 1;
    case 'DEL':
      return 2;
  }
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load, on purpose
export const lazy = (): unknown => require('node:path');
`;

  /** A front door's entry: the one kind of file that reads the environment (into loadConfig). */
  const FRONT_DOOR = `export function main(load: (env: Readonly<Record<string, string | undefined>>) => number): number {
  return load(process.env);
}
`;

  it('fails on each planted finding, naming its rule, and passes the clean file', () => {
    copyConfig('eslint.config.mjs');
    put('src/planted.ts', PLANTED);
    put('src/clean.ts', CLEAN);
    put('src/cni/main.ts', FRONT_DOOR);
    put('test/reads-env.ts', 'export const path = process.env.PATH;\n');
    const r = run(BIN.eslint, ['--format', 'json', 'src', 'test']);
    expect(r.status).toBe(1);
    const results = JSON.parse(r.stdout) as { filePath: string; messages: { line: number; ruleId: string | null; message: string }[] }[];
    const of = (name: string) => results.find((f) => f.filePath.endsWith(name))!.messages;
    expect(of('clean.ts')).toEqual([]);
    expect(of('src/cni/main.ts')).toEqual([]);
    expect(of('reads-env.ts')).toEqual([]);

    const lines = PLANTED.split('\n');
    const expected = lines.flatMap((l, i) => {
      const m = / \/\/ (@typescript-eslint\/[a-z-]+|no-[a-z-]+)$/.exec(l);
      return m ? [`${i + 1} ${m[1]}`] : [];
    });
    const directive = lines.indexOf('// eslint-disable-next-line no-console') + 1;
    const found = of('planted.ts').map((m) => `${m.line} ${m.ruleId ?? (/Unused eslint-disable directive/.test(m.message) ? 'unused-directive' : m.message)}`);
    expect(found.sort()).toEqual([...expected, `${directive} unused-directive`].sort());
    expect(expected).toHaveLength(11);
  });
});

describe('knip (knip.jsonc)', SLOW, () => {
  it('fails on a dead export, a dead exported type, a dead file and an unused dependency, and on nothing else', () => {
    copyConfig('knip.jsonc');
    put('package.json', JSON.stringify({ name: 'fixture', private: true, dependencies: { commander: '14.0.3', yaml: '2.9.1' } }));
    put('src/cli/entry.ts', "import { used, type Used } from '../util/text';\nimport { Command } from 'commander';\nexport const program: Used = used(new Command().name());\n");
    put('src/util/text.ts', 'export type Used = string;\nexport type Dead = number;\nexport function used(s: string): Used {\n  return s;\n}\nexport function dead(): void {}\n');
    put('src/util/orphan.ts', 'export const orphan = 1;\n');
    const r = run(BIN.knip, ['--reporter', 'json']);
    expect(r.status).not.toBe(0);
    const issues = (JSON.parse(r.stdout) as { issues: Record<string, unknown>[] }).issues;
    const found = issues.flatMap((i) =>
      Object.entries(i).flatMap(([kind, v]) =>
        Array.isArray(v) ? v.map((x: { name: string }) => `${kind} ${String(i.file)} ${x.name}`) : [],
      ),
    );
    expect(found.sort()).toEqual(
      ['dependencies package.json yaml', 'exports src/util/text.ts dead', 'files src/util/orphan.ts src/util/orphan.ts', 'types src/util/text.ts Dead'].sort(),
    );
  });
});
