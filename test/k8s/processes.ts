// The cluster's long-running components as child processes of the test: each logs to its own file, can be killed
// with any signal and started again with the same command line (kubelet restarted while pods run).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { launchedBy } from '../field/containerd';

export class Component {
  private proc: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly argv: string[],
    readonly log: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  start(): void {
    if (this.proc) throw new Error(`${this.name} is already running`);
    const fd = openSync(this.log, 'a');
    try {
      this.proc = spawn(this.argv[0], this.argv.slice(1), { env: this.env, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    const proc = this.proc;
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    proc.once('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
  }

  get running(): boolean {
    return this.proc !== null;
  }

  /** `signal`, then wait for the exit (SIGKILL after 15 s if it was a gentler signal). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * SIGKILL the program a launcher runs (`launcher ... -- program`: tini forks it, and a SIGKILL of tini would
   * leave it running) and wait until the launcher has exited with it.
   */
  async killLaunched(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    const child = launchedBy(proc.pid!);
    if (child === null) proc.kill('SIGKILL');
    else process.kill(child, 'SIGKILL');
    await this.exited;
  }

  /** The last lines of its log (for failure messages). */
  logTail(lines = 40): string {
    try {
      return readFileSync(this.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }
}
