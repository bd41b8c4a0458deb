// A child process that runs one engine operation, so a test can SIGKILL it at a failpoint or race two of them.
// argv[2]: JSON { op: 'lend' | 'giveBack' | 'recover', ... }. Prints one JSON line: { ok, result } or { ok:false, code, message }.
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';
import { SysError } from '../../src/errors';

const job = JSON.parse(process.argv[2]);
const session = openSession(loadConfig(process.env), { keepHandles: true });
try {
  let result: unknown;
  if (job.op === 'lend') result = session.lend(job.request).record.key;
  else if (job.op === 'giveBack') result = session.giveBack(job.key, job.options ?? {});
  else if (job.op === 'recover') result = session.recover();
  else throw new Error(`unknown op ${job.op}`);
  process.stdout.write(JSON.stringify({ ok: true, result }) + '\n');
} catch (err) {
  const code = err instanceof SysError ? err.code : 'ERROR';
  process.stdout.write(JSON.stringify({ ok: false, code, message: String((err as Error).message) }) + '\n');
  process.exitCode = 1;
}
