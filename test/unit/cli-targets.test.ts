import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { releaseTarget, resolveTarget } from '../../src/cli/targets';
import type { NamespaceSpec } from '../../src/lend/types';
import { CliError, ExitCode } from '../../src/cli/exit-codes';
import { fakeContainerRuntimes, type FakeRuntimes } from '../helpers/cli-fake-runtime';

async function failure(fn: () => Promise<unknown>): Promise<CliError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return err as CliError;
  }
  throw new Error('expected a CliError');
}

/** The spec holds the namespace of `pid`, open, recorded with its /proc path; closed here. */
function expectOpenNetnsOf(spec: NamespaceSpec, pid: number): void {
  if (!('netns' in spec)) throw new Error(`expected an open namespace, got ${JSON.stringify(spec)}`);
  try {
    const st = fs.statSync(`/proc/${pid}/ns/net`);
    expect(spec.netns.id).toEqual({ dev: st.dev, ino: st.ino });
    expect(spec.netns.path).toBe(`/proc/${pid}/ns/net`);
  } finally {
    releaseTarget(spec);
  }
  expect(spec.netns.fd).toBe(-1);
}

describe('resolveTarget', () => {
  let netnsDir: string;
  let child: ChildProcess;

  beforeAll(() => {
    // a live process whose pid the fake runtimes report
    child = spawn('sleep', ['60'], { stdio: 'ignore' });
  });
  afterAll(() => {
    child.kill('SIGKILL');
  });

  beforeEach(() => {
    // A stand-in for /var/run/netns: kubevirtci-style symlinks to /proc/<pid>/ns/net are real nsfs files.
    netnsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-netns-'));
    fs.symlinkSync(`/proc/${process.pid}/ns/net`, path.join(netnsDir, 'node1'));
    fs.writeFileSync(path.join(netnsDir, 'plainfile'), '');
  });
  afterEach(() => fs.rmSync(netnsDir, { recursive: true, force: true }));

  it('a bare name is a namespace under the netns directory', async () => {
    expect(await resolveTarget('node1', { netnsDir })).toEqual({ path: path.join(netnsDir, 'node1') });
  });

  it('a path is used as given', async () => {
    expect(await resolveTarget('/proc/self/ns/net')).toEqual({ path: '/proc/self/ns/net' });
    expect(await resolveTarget(path.join(netnsDir, 'node1'))).toEqual({ path: path.join(netnsDir, 'node1') });
  });

  it('pid:<pid> is that process\'s namespace, opened at once (a pid reused later cannot redirect it)', async () => {
    expectOpenNetnsOf(await resolveTarget(`pid:${process.pid}`), process.pid);
  });

  it('an unknown name or path fails (exit 1) naming the target', async () => {
    const e = await failure(() => resolveTarget('nosuchns', { netnsDir }));
    expect(e.exitCode).toBe(ExitCode.failed);
    expect(e.message).toMatch(/^target nosuchns: no such network namespace/);
    expect((await failure(() => resolveTarget('/nonexistent/ns'))).message).toMatch(/^target \/nonexistent\/ns: no such network namespace/);
  });

  it('a file that is not a namespace is refused', async () => {
    const e = await failure(() => resolveTarget('plainfile', { netnsDir }));
    expect(e.message).toMatch(/^target plainfile: .* is not a namespace file$/);
    expect((await failure(() => resolveTarget('/etc/hostname'))).message).toMatch(/not a namespace file/);
  });

  it('a dead pid fails; a malformed one is a usage error', async () => {
    expect((await failure(() => resolveTarget('pid:999999999'))).message).toMatch(/^target pid:999999999: no such process/);
    for (const bad of ['pid:', 'pid:abc', 'pid:-1', 'pid:0', 'pid:12x', 'pid:99999999999']) {
      const e = await failure(() => resolveTarget(bad));
      expect(e.exitCode, bad).toBe(ExitCode.usage);
      expect(e.message).toContain(`target ${bad}: not a pid`);
    }
  });

  it('empty and dot names are usage errors', async () => {
    expect((await failure(() => resolveTarget(''))).exitCode).toBe(ExitCode.usage);
    expect((await failure(() => resolveTarget('..', { netnsDir }))).exitCode).toBe(ExitCode.usage);
  });

  describe('docker: and podman:', () => {
    let fake: FakeRuntimes;
    const savedPath = process.env.PATH;

    beforeEach(() => {
      fake = fakeContainerRuntimes({ kind_worker: { pid: child.pid! }, stopped: { pid: 0 }, ghost: { pid: 999999999 } });
      process.env.PATH = `${fake.dir}:${savedPath}`;
      process.env.STANDIN_DIR = fake.env.STANDIN_DIR;
    });
    afterEach(() => {
      process.env.PATH = savedPath;
      delete process.env.STANDIN_DIR;
      fake.remove();
    });

    it.each(['docker', 'podman'])('%s:<c> is the running container pid, asked with inspect', async (rt) => {
      expectOpenNetnsOf(await resolveTarget(`${rt}:kind_worker`), child.pid!);
      expect(fake.calls()).toEqual([`${rt} inspect --type container --format {{.State.Pid}} kind_worker`]);
    });

    it.each(['docker', 'podman'])('%s: a stopped container is refused', async (rt) => {
      const e = await failure(() => resolveTarget(`${rt}:stopped`));
      expect(e.exitCode).toBe(ExitCode.failed);
      expect(e.message).toBe(`target ${rt}:stopped: container stopped is not running`);
    });

    it('an unknown container carries the runtime message', async () => {
      expect((await failure(() => resolveTarget('docker:nope'))).message).toBe('target docker:nope: Error: No such container: nope');
      expect((await failure(() => resolveTarget('podman:nope'))).message).toBe('target podman:nope: Error: No such container: nope');
    });

    it('a pid that vanished between inspect and use is reported', async () => {
      expect((await failure(() => resolveTarget('docker:ghost'))).message).toMatch(/^target docker:ghost: no such process/);
    });

    it('a container name that looks like an option is never passed to the runtime', async () => {
      const e = await failure(() => resolveTarget('docker:--help'));
      expect(e.exitCode).toBe(ExitCode.usage);
      expect(fake.calls()).toEqual([]);
    });

    it('a missing runtime says so', async () => {
      process.env.PATH = '/nonexistent';
      expect((await failure(() => resolveTarget('podman:x'))).message).toBe('target podman:x: podman is not installed (not on PATH)');
    });
  });
});
