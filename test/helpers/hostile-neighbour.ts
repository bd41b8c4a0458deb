// A hostile neighbour for real: an unprivileged process (uid nobody) in a user and mount namespace of its own, with
// a tmpfs on its /run, that fills its own /run/netns with whatever it likes — a huge directory, FIFOs, links that
// dangle inside it or loop, a link it keeps flipping, a bind mount — and stays alive, since sriovctl reaches other
// containers' directories through /proc/<pid>/root of a live process. Killing it removes everything: the tmpfs
// dies with its mount namespace.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NeighbourPlan {
  /** Regular files in /run/netns (junk0…). */
  files?: number;
  fifos?: number;
  /** name → target: symlinks in /run/netns (a host path dangles inside: the neighbour's /run is its own). */
  links?: Record<string, string>;
  /** A link that loops on itself. */
  loop?: boolean;
  /** A bind mount of its own network namespace (it has one: `unshare -n`), a real candidate of its own. */
  bindOwnNetns?: boolean;
  /** A link /run/netns/<name> flipped without pause between `a` and `b` (../plain: a plain file of its own, from here reached inside its root). */
  flip?: { name: string; a: string; b: string };
}

export interface Neighbour {
  pid: number;
  /** Its root as seen from here. */
  root: string;
  /** Its /run/netns as seen from here. */
  netnsDir: string;
  /** How many times the flipping link has been flipped so far (0 when there is none). */
  flips(): number;
  kill(): Promise<void>;
}

// runs as nobody inside the namespaces: plants, says "ready", then flips or sleeps until killed
const PLANTER = `
const fs = require('fs');
const { execFileSync } = require('child_process');
const plan = JSON.parse(process.argv[2]);
execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512m,nr_inodes=0', 'tmpfs', '/run']);
const dir = '/run/netns';
fs.mkdirSync(dir);
for (let i = 0; i < (plan.files || 0); i++) fs.closeSync(fs.openSync(dir + '/junk' + i, 'w'));
const fifos = Array.from({ length: plan.fifos || 0 }, (_, i) => dir + '/fifo' + i);
for (let i = 0; i < fifos.length; i += 500) execFileSync('mkfifo', fifos.slice(i, i + 500));
for (const [name, target] of Object.entries(plan.links || {})) fs.symlinkSync(target, dir + '/' + name);
if (plan.loop) fs.symlinkSync(dir + '/loop', dir + '/loop');
if (plan.bindOwnNetns) {
  fs.closeSync(fs.openSync(dir + '/own', 'w'));
  execFileSync('mount', ['--bind', '/proc/self/ns/net', dir + '/own']);
}
fs.writeFileSync('/run/flips', '0');
fs.writeFileSync('/run/plain', 'a file of its own, not a namespace\\n');
process.stdout.write('ready\\n');
if (plan.flip) {
  const { name, a, b } = plan.flip;
  const tmp = dir + '/.' + name;
  let n = 0;
  for (;;) {
    fs.symlinkSync(n % 2 ? b : a, tmp);
    fs.renameSync(tmp, dir + '/' + name);
    if (++n % 1000 === 0) fs.writeFileSync('/run/flips', String(n));
  }
} else {
  setInterval(() => {}, 1 << 30);
}
`;

/** Starts a neighbour and waits until everything is planted (a huge directory takes seconds). */
export async function startNeighbour(plan: NeighbourPlan): Promise<Neighbour> {
  const dir = mkdtempSync(join(tmpdir(), 'sriovctl-neighbour-'));
  chmodSync(dir, 0o755);
  const script = join(dir, 'plant.js');
  writeFileSync(script, PLANTER, { mode: 0o644 });
  const child = spawn(
    'setpriv',
    ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'unshare', '-Urmn', '--', process.execPath, script, JSON.stringify(plan)],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' },
  );
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  try {
    await readyOf(child, () => err);
  } catch (e) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // setpriv execs unshare, which execs node (no --fork): one process, the child's pid
  const pid = child.pid!;
  const root = `/proc/${pid}/root`;
  return {
    pid,
    root,
    netnsDir: `${root}/run/netns`,
    flips() {
      try {
        return Number(readFileSync(`${root}/run/flips`, 'utf8'));
      } catch {
        return 0;
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readyOf(child: ChildProcess, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`the neighbour exited (${code ?? signal}) before planting: ${stderr()}`)));
  });
}
