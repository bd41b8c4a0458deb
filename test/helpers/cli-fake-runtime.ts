// The `docker` / `podman` stand-ins of test/fixtures/bin (shared with the cluster tests; no container engine runs
// here), set up for target resolution: each container is a file holding its init pid (0: stopped).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const STANDIN_BIN = path.resolve(__dirname, '..', 'fixtures', 'bin');

export interface FakeRuntimes {
  /** Prepend to PATH. */
  dir: string;
  /** Environment the stand-ins need (pass it to the process that runs them). */
  env: { STANDIN_DIR: string };
  /** Every invocation, one line per call ('docker inspect …'). */
  calls(): string[];
  remove(): void;
}

/** Stand-ins knowing `containers` (name → init pid, 0 for a stopped one). */
export function fakeContainerRuntimes(containers: Record<string, { pid: number }>): FakeRuntimes {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-fake-runtime-'));
  fs.mkdirSync(path.join(state, 'containers'));
  for (const [name, c] of Object.entries(containers)) fs.writeFileSync(path.join(state, 'containers', name), `${c.pid}\n`);
  const log = path.join(state, 'calls.jsonl');
  return {
    dir: STANDIN_BIN,
    env: { STANDIN_DIR: state },
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { tool: string; args: string[] })
            .map((c) => [c.tool, ...c.args].join(' '))
        : [],
    remove: () => fs.rmSync(state, { recursive: true, force: true }),
  };
}
