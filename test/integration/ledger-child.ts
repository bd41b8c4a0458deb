// A second process for the ledger integration tests (run through test/helpers/ts-child.ts).
//   lock <dir> <key> <timeoutMs> <exclusive|shared> <holdMs>  take the lock, print 'locked', hold, release, exit
//   crash-write <dir> <step>                                   die by SIGKILL between temp write and rename
import { isSysError } from '../../src/errors';
import { lockNic, openLedger, writeRecord } from '../../src/ledger';
import { sampleRecord } from '../helpers/ledger-record';

const [cmd, dir, ...rest] = process.argv.slice(2);
const ledger = openLedger(dir);

if (cmd === 'lock') {
  const [key, timeoutMs, mode, holdMs] = rest;
  const started = Date.now();
  try {
    const lock = lockNic(ledger, key, { timeoutMs: Number(timeoutMs), shared: mode === 'shared', holder: `child ${process.pid}` });
    console.log(`locked after ${Date.now() - started} ms`);
    setTimeout(() => {
      lock.release();
      console.log('released');
    }, Number(holdMs));
  } catch (err) {
    if (!isSysError(err, 'BUSY')) throw err;
    console.log(`BUSY ${(err as Error).message}`);
  }
} else if (cmd === 'crash-write') {
  const [step] = rest;
  writeRecord(ledger, sampleRecord({ step }), {
    beforeRename: () => {
      console.log('crashing');
      process.kill(process.pid, 'SIGKILL');
    },
  });
} else {
  throw new Error(`unknown command ${cmd}`);
}
