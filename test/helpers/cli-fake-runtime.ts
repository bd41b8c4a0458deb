// Stand-ins for the `docker` and `podman` CLIs (no container engine runs here): shell scripts on PATH that
// answer `inspect --type container --format '{{.State.Pid}}' <c>` like the real ones do.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface FakeContainer {
  /** 0 for a stopped container (the real CLIs print 0). */
  pid: number;
}

export interface FakeRuntimes {
  /** Prepend to PATH. */
  dir: string;
  /** Every invocation's argv, one line per call, for both runtimes ('docker inspect …'). */
  calls(): string[];
  remove(): void;
}

/** Writes `docker` and `podman` stand-ins knowing `containers` (name → state) into a fresh temp dir. */
export function fakeContainerRuntimes(containers: Record<string, FakeContainer>): FakeRuntimes {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-fake-runtime-'));
  const log = path.join(dir, 'calls.log');
  const cases = Object.entries(containers)
    .map(([name, c]) => `    ${shellQuote(name)}) echo ${c.pid}; exit 0 ;;`)
    .join('\n');
  for (const runtime of ['docker', 'podman']) {
    const missing =
      runtime === 'docker' ? `echo "Error: No such container: $c" >&2` : `echo "Error: no such container $c" >&2`;
    const script = `#!/bin/sh
echo "${runtime} $*" >> ${shellQuote(log)}
[ "$1" = inspect ] || { echo "${runtime}: unknown command $1" >&2; exit 125; }
shift
type=""; format=""
while [ $# -gt 1 ]; do
  case "$1" in
    --type) type="$2"; shift 2 ;;
    --format|-f) format="$2"; shift 2 ;;
    *) echo "${runtime}: unexpected argument $1" >&2; exit 125 ;;
  esac
done
c="$1"
[ "$type" = container ] || { echo "${runtime}: expected --type container" >&2; exit 125; }
[ "$format" = '{{.State.Pid}}' ] || { echo "${runtime}: unexpected format $format" >&2; exit 125; }
case "$c" in
${cases}
  *) ${missing}; exit 1 ;;
esac
`;
    fs.writeFileSync(path.join(dir, runtime), script, { mode: 0o755 });
  }
  return {
    dir,
    calls: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
