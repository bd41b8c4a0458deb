// Run by cli-pid-target.test.ts as pid 1 of a private pid namespace (unshare --pid --fork --mount-proc), where
// nothing else takes pids: resolves `pid:<A>` for a process A in a network namespace of its own, kills A, makes
// the very same pid go to a new process B in our namespace (ns_last_pid), then reports which namespace the
// resolved target names now. One JSON line on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { namespaceIdOf, releaseTarget, resolveTarget } from '../../src/cli/targets';
import { openSpec } from '../../src/lend/namespaces';

const idOf = (pid: number) => {
  const st = statSync(`/proc/${pid}/ns/net`);
  return { dev: st.dev, ino: st.ino };
};

const exited = (c: ChildProcess) => new Promise((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve(null) : c.once('exit', resolve)));

async function main(): Promise<void> {
  const own = idOf(process.pid);
  const a = spawn('unshare', ['--net', 'sleep', '600'], { stdio: 'ignore' });
  const pid = a.pid!;
  // until unshare has made its namespace and exec'd sleep (bounded)
  for (let i = 0; idOf(pid).ino === own.ino; i++) {
    if (i === 2000) throw new Error('process A never entered its own namespace');
    await new Promise((r) => setTimeout(r, 5));
  }
  const idA = idOf(pid);
  const target = await resolveTarget(`pid:${pid}`);
  a.kill('SIGKILL');
  await exited(a);

  let b: ChildProcess | null = null;
  for (let attempt = 0; attempt < 50 && b?.pid !== pid; attempt++) {
    if (b) {
      b.kill('SIGKILL');
      await exited(b);
    }
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(pid - 1));
    b = spawn('sleep', ['600'], { stdio: 'ignore' });
  }
  if (b?.pid !== pid) throw new Error(`pid ${pid} was not reused (last got ${b?.pid})`);
  const opened = openSpec(target);
  const report = { pid, idA, own, idNow: idOf(pid), resolved: namespaceIdOf(target), opened: opened.id };
  opened.close();
  releaseTarget(target);
  b.kill('SIGKILL');
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
