// A small ext4 filesystem on a loop device, to see what a power cut leaves of files written on it:
// EXT4_IOC_SHUTDOWN with EXT4_GOING_FLAGS_LOGFLUSH commits the journal and then drops everything not yet written
// back (as a cut does), and unmounting and mounting again shows what the next boot would find.
//
// It is mounted in a mount namespace of its own (a `sleep` holds it), never in ours: every mount namespace made
// while it is mounted (`ip netns exec`, which other tests run all the time) would keep a copy, the shut-down
// filesystem would outlive our unmount, and mounting again would find it still shut down (EIO). Processes that
// use it run through `launcher`; the test reads its files through `view()`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';

const EXT4_IOC_SHUTDOWN = 0x8004587d;
const EXT4_GOING_FLAGS_LOGFLUSH = 1;

/** Opens the mount point, says 'ready', and issues the shutdown when a line arrives on stdin (then says 'cut'). */
const CUTTER = `
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
print('ready', flush=True)
sys.stdin.readline()
fcntl.ioctl(fd, ${EXT4_IOC_SHUTDOWN}, struct.pack('I', ${EXT4_GOING_FLAGS_LOGFLUSH}))
print('cut', flush=True)
`;

const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** A power cut armed on the filesystem: fire() issues it at once and resolves once it is done. */
export interface ArmedCut {
  fire(): Promise<void>;
}

export class Ext4Image {
  private mounted = false;

  private constructor(
    private readonly dir: string,
    private readonly device: string,
    private readonly holder: ChildProcess,
    /** Where it is mounted, inside the holder's mount namespace. */
    readonly mountPoint: string,
  ) {}

  /** A fresh image of `sizeMiB` on a loop device of its own, mounted with the default options (data=ordered). */
  static async create(sizeMiB = 64): Promise<Ext4Image> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-ext4-'));
    const image = path.join(dir, 'fs.img');
    const mountPoint = path.join(dir, 'mnt');
    let device = '';
    let holder: ChildProcess | null = null;
    try {
      fs.mkdirSync(mountPoint);
      fs.writeFileSync(image, '');
      fs.truncateSync(image, sizeMiB * 1024 * 1024);
      run('mkfs.ext4', '-q', '-F', image);
      device = run('losetup', '--find', '--show', image);
      // a slave: what is mounted or unmounted in ours reaches it (a named namespace deleted is not pinned by its
      // copy), and nothing mounted in it reaches ours
      holder = spawn('unshare', ['--mount', '--propagation', 'slave', 'sleep', 'infinity'], { stdio: 'ignore' });
      await ownMountNamespace(holder);
      const fsImage = new Ext4Image(dir, device, holder, mountPoint);
      fsImage.mount();
      return fsImage;
    } catch (err) {
      holder?.kill('SIGKILL');
      if (device) run('losetup', '-d', device);
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The command prefix that runs a program where the filesystem is mounted. */
  get launcher(): string[] {
    return ['nsenter', `--target=${this.holder.pid}`, '--mount', '--'];
  }

  /** `p` (a path under the mount point) as this process can read it. */
  view(p: string): string {
    return `/proc/${this.holder.pid}/root${p}`;
  }

  private inside(cmd: string, ...args: string[]): void {
    const [prefix, ...rest] = this.launcher;
    run(prefix, ...rest, cmd, ...args);
  }

  private mount(): void {
    this.inside('mount', '-t', 'ext4', this.device, this.mountPoint);
    this.mounted = true;
  }

  private unmount(): void {
    if (!this.mounted) return;
    this.inside('umount', this.mountPoint);
    this.mounted = false;
  }

  /** Starts the cutter; the cut is ready (the mount point open) once the promise resolves. */
  async arm(): Promise<ArmedCut> {
    const child = spawn('python3', ['-c', CUTTER, this.view(this.mountPoint)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
    const next = lineReader(child, () => stderr);
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    if ((await next()) !== 'ready') throw new Error(`the cutter did not start: ${stderr}`);
    return {
      async fire() {
        child.stdin!.write('go\n');
        const said = await next();
        await exited;
        if (said !== 'cut') throw new Error(`EXT4_IOC_SHUTDOWN failed: ${stderr}`);
      },
    };
  }

  /** What the next boot finds: unmounted (every process using it must be gone) and mounted again (journal replayed). */
  remount(): void {
    this.unmount();
    this.mount();
  }

  async remove(): Promise<void> {
    try {
      // the mount goes with the holder's namespace in any case (a process still using it keeps it until it exits)
      this.unmount();
    } catch {
      // busy: released with the namespace below
    } finally {
      const gone = new Promise((resolve) => (this.holder.exitCode !== null ? resolve(null) : this.holder.once('exit', resolve)));
      this.holder.kill('SIGKILL');
      await gone;
      try {
        run('losetup', '-d', this.device);
      } finally {
        fs.rmSync(this.dir, { recursive: true, force: true });
      }
    }
  }
}

async function ownMountNamespace(child: ChildProcess): Promise<void> {
  const ours = fs.readlinkSync('/proc/self/ns/mnt');
  const end = Date.now() + 60_000; // a hang guard: on a busy machine a process start can take seconds
  while (Date.now() < end) {
    try {
      if (fs.readlinkSync(`/proc/${child.pid}/ns/mnt`) !== ours) return;
    } catch {
      // not started yet
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('unshare --mount did not start');
}

/** Lines of the child's stdout, one per call; once it is gone, a line saying so. */
function lineReader(child: ChildProcess, stderr: () => string): () => Promise<string> {
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => (waiting.length ? waiting.shift()!(line) : queue.push(line)));
  child.once('close', () => {
    while (waiting.length) waiting.shift()!(`exited: ${stderr()}`);
  });
  return () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}
