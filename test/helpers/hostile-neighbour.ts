// A hostile neighbour for real: an unprivileged process (uid nobody) in a user and mount namespace of its own, with
// a tmpfs on its /run, that fills its own /run/netns with whatever it likes — a huge directory, FIFOs, links that
// dangle inside it or loop, a link it keeps flipping, a bind mount — and stays alive, since sriovctl reaches other
// containers' directories through /proc/<pid>/root of a live process. Killing it removes everything: the tmpfs
// dies with its mount namespace.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
  /** A second network namespace of its own that no process is in, bound at /run/ns2 (link to it as ../ns2). */
  bindSecondNetns?: boolean;
  /** A link /run/netns/<name> flipped without pause between `a` and `b` (../plain: a plain file of its own, from here reached inside its root). */
  flip?: { name: string; a: string; b: string };
  /** An entry made and removed in /run/netns every 2 ms: the directory never stays unchanged. */
  churn?: boolean;
  /** On SIGHUP, the link /run/netns/<name> made to point at `to` (then /run/flipped exists). */
  flipOnSignal?: { name: string; to: string };
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

/** The neighbour's program: plain JavaScript, world-readable where it lives (nobody runs it). */
export const PLANTER = join(__dirname, 'neighbour-planter.js');

/** Starts a neighbour and waits until everything is planted (a huge directory takes seconds). */
export async function startNeighbour(plan: NeighbourPlan): Promise<Neighbour> {
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'unshare', '-Urmn', '--', process.execPath, PLANTER, JSON.stringify(plan)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: '/',
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  try {
    await readyOf(child, () => err);
  } catch (e) {
    child.kill('SIGKILL');
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
