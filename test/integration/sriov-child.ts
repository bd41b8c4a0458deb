// A second process for the sriov integration tests (run through test/helpers/ts-child.ts).
//   stuck-write <fifo> <timeoutMs>        a bounded write that cannot finish; the process must still exit by itself
//   locked-write <fifo> <stateDir> <key>  a write started under a NIC's lock, its writer holding the lock too; says
//                                         'writing' and waits (to be killed)
import { lockNic, openLedger } from '../../src/ledger';
import { writeSysfs } from '../../src/sriov';

const [cmd, file, timeoutMs] = process.argv.slice(2);
if (cmd === 'stuck-write') {
  writeSysfs(file, '1', { timeoutMs: Number(timeoutMs) }).then(
    () => console.log('written'),
    (err) => console.log(`failed ${err.code}`),
  );
} else if (cmd === 'locked-write') {
  const lock = lockNic(openLedger(process.argv[4]), process.argv[5], { timeoutMs: 0 });
  void writeSysfs(file, '1', { timeoutMs: 600_000, holdFds: [lock.fd] });
  console.log('writing');
  setInterval(() => undefined, 1000);
} else {
  throw new Error(`unknown command ${cmd}`);
}
