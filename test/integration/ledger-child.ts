// A second process for the ledger integration tests (run through test/helpers/ts-child.ts).
//   lock <dir> <key> <timeoutMs> <exclusive|shared> <holdMs> [<releaseFile>]
//        take the lock, print 'locked', hold for holdMs or until releaseFile exists, release, print 'released'
//   crash-write <dir> <step>                                   die by SIGKILL between temp write and rename
//   crash-index <dir> <point> <key> <owner>                    die by SIGKILL at a point of the owner index's:
//        new-before-rename  a new record's entry made, its file not yet renamed into place
//        rewrite-after-rename  a record rewritten (step 'rewritten'), the replaced file's entry not yet removed
//        delete-after-unlink  a record deleted, its entry not yet removed
import * as fs from 'node:fs';
import { isSysError } from '../../src/errors';
import { deleteRecord, lockNic, openLedger, writeRecord } from '../../src/ledger';
import { sampleRecord } from '../helpers/ledger-record';

const [cmd, dir, ...rest] = process.argv.slice(2);
const ledger = openLedger(dir);

if (cmd === 'lock') {
  const [key, timeoutMs, mode, holdMs, releaseFile] = rest;
  const started = Date.now();
  try {
    const lock = lockNic(ledger, key, { timeoutMs: Number(timeoutMs), shared: mode === 'shared', holder: `pid ${process.pid} on child-host` });
    console.log(`locked after ${Date.now() - started} ms`);
    const release = () => {
      clearInterval(poll);
      clearTimeout(timer);
      lock.release();
      console.log('released');
    };
    const timer = setTimeout(release, Number(holdMs));
    const poll = setInterval(() => releaseFile && fs.existsSync(releaseFile) && release(), 10);
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
} else if (cmd === 'crash-index') {
  const [point, key, owner] = rest;
  const crash = () => {
    console.log('crashing');
    process.kill(process.pid, 'SIGKILL');
  };
  if (point === 'new-before-rename') writeRecord(ledger, sampleRecord({ key, owner, step: 'new' }), { beforeRename: crash });
  else if (point === 'rewrite-after-rename') writeRecord(ledger, sampleRecord({ key, owner, step: 'rewritten' }), { afterRename: crash });
  else if (point === 'delete-after-unlink') deleteRecord(ledger, key, { afterRemove: crash });
  else throw new Error(`unknown crash point ${point}`);
} else {
  throw new Error(`unknown command ${cmd}`);
}
