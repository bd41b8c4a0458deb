// A second process for the install-cni integration tests (run through test/helpers/ts-child.ts).
//   install <binDir> <sourceDir> [<lockTimeoutSeconds>]
//        install-cni's path (the install lock, then the payload) with the payload read from files: <sourceDir>/plugin
//        becomes <binDir>/sriovctl-cni, every other file under <sourceDir> a payload file of the same path (in the
//        order 'sriovctl', 'oneshot', then lib/ sorted: a FIFO there blocks the copy part-way). Prints what
//        install-cni prints, then 'exit <code>'.
//   hold <payloadDir>
//        what a launcher does for the life of a plugin call: a shared flock on the payload dir; prints 'held'.
import { constants, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { installCni } from '../../src/cli/install-cni';
import type { CommandIo } from '../../src/cli/command-kit';
import { CliError } from '../../src/cli/exit-codes';
import { Output } from '../../src/cli/output';
import { installPlugin, type PayloadFile } from '../../src/install/install-plugin';
import { lockFd } from '../../src/fs/flock';

const [cmd, ...args] = process.argv.slice(2);

if (cmd === 'install') {
  const [binDir, source, lockTimeout] = args;
  const payload: PayloadFile[] = ['sriovctl', 'oneshot', ...readdirSync(join(source, 'lib')).sort().map((f) => `lib/${f}`)].map((path) => ({ path, content: { file: join(source, path) } }));
  const io = { out: new Output({ quiet: false, verbose: false }, process.stdout, process.stderr) } as unknown as CommandIo;
  console.log('starting');
  installCni(io, { to: binDir, lockTimeout }, (lock, _shim, warn) => installPlugin(lock, 'sriovctl-cni', payload, { file: join(source, 'plugin') }, warn)).then(
    (code) => console.log(`exit ${code}`),
    (err: unknown) => {
      if (!(err instanceof CliError)) throw err;
      console.log(`error ${err.message}`);
      console.log('exit 1');
    },
  );
} else if (cmd === 'hold') {
  const fd = openSync(args[0], constants.O_RDONLY | constants.O_DIRECTORY);
  if (!lockFd(fd, { exclusive: false, timeoutMs: 0 })) throw new Error(`${args[0]} is locked`);
  console.log('held');
  // the fd stays open (and locked) until we are killed
  setInterval(() => undefined, 1 << 30);
} else {
  throw new Error(`unknown command ${cmd}`);
}
