// One CNI request through the one-shot plugin's own code (runCni): the environment the daemon admitted
// (./caller-env.ts) and the caller's stdin in, its
// stdout, stderr and exit code out. The stdin the shim could not read (too large, never closed) fails here with
// the plugin's own error for it, so both transports answer alike.
import { runCni, type CniIo } from '../cni/run';
import { loadConfig, type Config } from '../config';
import { stdinTimedOut, stdinTooLarge } from '../cni/stdio';
import { StdinState, type DaemonReply, type DaemonRequest } from './wire';

/** `own`: the daemon's configuration, whose failpoint and pause point (tests) apply, never a caller's. */
export async function runRequest(req: DaemonRequest, own: Pick<Config, 'failpoint' | 'pause'> = {}): Promise<DaemonReply> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CniIo = {
    env: req.env,
    // where the call acts is what the daemon admitted (its own dirs, or the caller's below its caller root)
    config: { ...loadConfig(req.env), failpoint: own.failpoint ?? null, pause: own.pause ?? null },
    readStdin() {
      switch (req.stdinState) {
        case StdinState.tooLarge:
          throw stdinTooLarge();
        case StdinState.timedOut:
          throw stdinTimedOut();
        default:
          return req.stdin;
      }
    },
    writeStdout: (value) => void out.push(JSON.stringify(value) + '\n'),
    writeStderr: (text) => void err.push(text),
    // the call runs with the daemon's privileges: its IPAM plugin gets nothing of the caller's but the CNI variables
    cleanDelegateEnv: true,
  };
  const exitCode = await runCni(io);
  return { exitCode, stdout: out.join(''), stderr: err.join('') };
}
