// A waiter for lock file argv[2] (exclusive, up to argv[3] ms): prints one JSON line, what it got.
import * as fs from 'node:fs';
import { lockFile } from '../../src/fs/file-lock';

const taken = lockFile(process.argv[2], { timeoutMs: Number(process.argv[3]) });
if ('held' in taken) {
  process.stdout.write(JSON.stringify({ held: true, ino: fs.fstatSync(taken.held.fd).ino }) + '\n');
  taken.held.release();
} else {
  process.stdout.write(JSON.stringify({ held: false }) + '\n');
}
