// `sriovctl daemon`: the resident CNI path. Serves CNI calls on a root-only unix socket (SRIOVCTL_SOCKET, default
// /run/sriovctl/cni.sock) for the sriovctl-cni shim, in the foreground, logging to stderr; SIGTERM (or SIGINT)
// stops accepting, answers every request already taken, then exits 0. `sriovctl daemon --probe` serves nothing: it
// exits 0 when a daemon answers on the socket, else 1 naming why — a readiness probe for an image with no shell.
import type { Command } from 'commander';
import { queryDaemon } from '../daemon/query';
import { daemonCallConfig, describeCallConfig, type DaemonCallConfig } from '../daemon/caller-env';
import { Daemon } from '../daemon/server';
import { DEFAULT_SOCKET } from '../config';
import { boundDaemonMemory } from '../daemon/memory-bound';
import { sizeThreadPool } from '../daemon/thread-pool';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode } from './exit-codes';

export function registerDaemonCommand(program: Command, kit: CommandKit): void {
  program
    .command('daemon')
    .description('serve CNI calls for the sriovctl-cni shim on a root-only unix socket (env SRIOVCTL_SOCKET, default /run/sriovctl/cni.sock)')
    .option('--probe', 'serve nothing: exit 0 when a daemon answers on the socket, 1 when none does (a readiness probe)')
    .action(kit.action<{ probe?: boolean }>(() => 'daemon', (io, _args, opts) => (opts.probe ? probe(io) : serve(io))));
}

async function probe(io: CommandIo): Promise<ExitCode> {
  const socket = socketOf(io);
  const state = await queryDaemon(socket);
  if (!state.serving) throw new CliError(state.reason);
  io.out.line(`daemon: pid ${state.stats.pid} serves ${socket}`);
  return ExitCode.ok;
}

/** How long a connection may take to send its whole request (seconds, 1–600; default 40: stdin may take 30). */
function requestDeadlineMs(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 40_000;
  if (!/^[1-9]\d{0,2}$/.test(raw) || Number(raw) > 600) throw new CliError(`SRIOVCTL_DAEMON_REQUEST_DEADLINE_S ${JSON.stringify(raw)}: want whole seconds from 1 to 600`);
  return Number(raw) * 1000;
}

/** Where the daemon listens (SRIOVCTL_SOCKET, read into the configuration once). */
export function socketOf(io: CommandIo): string {
  return io.session.config.socket ?? DEFAULT_SOCKET;
}

async function serve(io: CommandIo): Promise<ExitCode> {
  const socket = socketOf(io);
  if (process.geteuid?.() !== 0) throw new CliError('the daemon serves root alone and runs as root');
  sizeThreadPool();
  const memory = boundDaemonMemory();
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} sriovctl daemon[${process.pid}] ${line}\n`);
  let daemon: Daemon;
  let callConfig: DaemonCallConfig;
  try {
    // the daemon's settings, from the environment its front door handed down in the configuration
    const env = io.session.config.env;
    callConfig = daemonCallConfig(env);
    daemon = await Daemon.start({ socket, log, callConfig, afterCall: (inFlight) => memory.afterCall(inFlight), requestDeadlineMs: requestDeadlineMs(env.SRIOVCTL_DAEMON_REQUEST_DEADLINE_S) });
  } catch (err) {
    throw new CliError(`cannot serve: ${(err as Error).message}`);
  }
  // a bug in one connection's handling must not take every later call down: log it, keep serving
  process.on('uncaughtException', (err) => log(`internal error: ${err.stack ?? err.message}`));
  log(`serving ${socket}: ${describeCallConfig(callConfig)}`);
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      log(`${sig}: no new requests; finishing ${daemon.inFlight} in flight`);
      void daemon.stop().then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log('stopped');
  return ExitCode.ok;
}
