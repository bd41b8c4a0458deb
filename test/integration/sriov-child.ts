// A second process for the sriov integration tests (run through test/helpers/ts-child.ts).
//   stuck-write <fifo> <timeoutMs>   a bounded write that cannot finish; the process must still exit by itself
import { writeSysfs } from '../../src/sriov';

const [cmd, file, timeoutMs] = process.argv.slice(2);
if (cmd === 'stuck-write') {
  writeSysfs(file, '1', { timeoutMs: Number(timeoutMs) }).then(
    () => console.log('written'),
    (err) => console.log(`failed ${err.code}`),
  );
} else {
  throw new Error(`unknown command ${cmd}`);
}
