// Every verb but VERSION: environment, stdin and config parsed and checked, the verb run, its result or one
// error object printed. Loaded by main.ts only when needed.
import { loadConfig, type Config } from '../config';
import { CNI_ERR, CniError, errorObject, invalidConfig } from './errors';
import { parseEnv, type Verb } from './env';
import { DEFAULT_LOG_CONF, log, Logger, runWithLogger } from './log';
import { allowedLogDirs, logFileProblem } from './log-file';
import { configVersionOf, decodeStdin, parseLogConf, parseNetConf } from './netconf';
import { formatResult, lostInConversion } from './result';
import { readStdin, writeStderr, writeStdout } from './stdio';
import { aboutPlugin, isSupported, LATEST_VERSION, requireVerbAllowed, versionReply } from './versions';
import type { VerbHandler } from './verb';

/* eslint-disable @typescript-eslint/no-require-imports -- a lazy require is what keeps VERSION off the addon */
function loadVerb(verb: Exclude<Verb, 'VERSION'>): VerbHandler {
  switch (verb) {
    case 'ADD':
      return (require('./cmd-add') as typeof import('./cmd-add')).cmdAdd;
    case 'DEL':
      return (require('./cmd-del') as typeof import('./cmd-del')).cmdDel;
    case 'CHECK':
      return (require('./cmd-check') as typeof import('./cmd-check')).cmdCheck;
    case 'STATUS':
      return (require('./cmd-status') as typeof import('./cmd-status')).cmdStatus;
    case 'GC':
      return (require('./cmd-gc') as typeof import('./cmd-gc')).cmdGc;
  }
}
/* eslint-enable @typescript-eslint/no-require-imports */

/** What one call reads and writes: the process's own (run) or a test's (the hostile-input suite runs thousands). */
export interface CniIo {
  env: NodeJS.ProcessEnv;
  /** The configuration its front door read (the one-shot plugin's main, the daemon); default: read from `env`. */
  config?: Config;
  readStdin(): string;
  writeStdout(value: unknown): void;
  writeStderr(text: string): void;
  /** Delegated plugins get the CNI variables and PATH alone (the daemon's calls), not all of `env`. */
  cleanDelegateEnv?: boolean;
}

/** The one-shot plugin: the process's own call, with the configuration and environment its main read. */
export function run(config: Config, env: NodeJS.ProcessEnv): Promise<number> {
  return runCni({ env, config, readStdin: () => readStdin(), writeStdout, writeStderr });
}

function answerVersion(io: CniIo): number {
  io.writeStdout(versionReply());
  return 0;
}

/**
 * One plugin call on `io`; returns the exit code. Calls may run at once in one process (the daemon): each has its
 * own logger and environment, so nothing of another call's config (its logFile) or variables applies to it.
 */
export async function runCni(io: CniIo): Promise<number> {
  const logger = new Logger();
  logger.configure(DEFAULT_LOG_CONF, '', [], io.writeStderr);
  try {
    return await runWithLogger(logger, () => runCall(io));
  } finally {
    logger.close();
  }
}

async function runCall(io: CniIo): Promise<number> {
  let replyVersion: string = LATEST_VERSION;
  try {
    // VERSION needs nothing but CNI_COMMAND, and is answered before anything else is read — as main.ts answers it
    // without loading this module at all, so both paths give the same reply whatever else the environment holds
    if (io.env.CNI_COMMAND === 'VERSION') return answerVersion(io);
    // no CNI_COMMAND: a person ran it (main.ts answers the same before loading this module)
    if (!io.env.CNI_COMMAND) {
      io.writeStderr(aboutPlugin());
      return 0;
    }
    const env = parseEnv(io.env, io.cleanDelegateEnv);
    const verb = env.command;
    if (verb === 'VERSION') return answerVersion(io); // answered above; this narrows the verb
    const raw = decodeStdin(io.readStdin());
    const asked = configVersionOf(raw);
    // never echo a version we do not speak: the runtime could not read the error in it (libcni answers in its own)
    if (isSupported(asked)) replyVersion = asked;
    const target = env.containerId ? ` ${env.containerId}/${env.ifname ?? ''}` : '';
    const logConf = parseLogConf(raw);
    const logDirs = allowedLogDirs(io.env);
    log.configure(logConf, `${verb}${target}: `, logDirs, io.writeStderr);
    if (logConf.warning) log.warning(logConf.warning);
    const conf = parseNetConf(raw, verb);
    // a logFile where none may be is a config error — but never a reason for DEL to leave a NIC lent
    const logProblem = logConf.file === null ? null : logFileProblem(logConf.file, logDirs);
    if (logProblem && verb !== 'DEL') throw invalidConfig('logFile', `${JSON.stringify(logConf.file)} ${logProblem}`);
    requireVerbAllowed(verb, conf.cniVersion);
    log.debug(`network ${JSON.stringify(conf.name)}, CNI ${conf.cniVersion}`);
    const handler = loadVerb(verb);
    const result = await handler({ env, conf, config: io.config ?? loadConfig(io.env) });
    if (result) {
      const lost = lostInConversion(result, conf.cniVersion);
      if (lost.length) log.debug(`not representable in CNI ${conf.cniVersion}: ${lost.join(', ')}`);
      io.writeStdout(formatResult(result, conf.cniVersion));
    }
    log.info('done');
    return 0;
  } catch (err) {
    const cniErr = toCniError(err);
    log.error(`code ${cniErr.code}: ${cniErr.message}${cniErr.details ? ` (${cniErr.details})` : ''}`);
    io.writeStdout(errorObject(replyVersion, cniErr));
    return 1;
  }
}

/** Expected failures are CniErrors already; anything else is a bug, logged with its stack. */
function toCniError(err: unknown): CniError {
  if (err instanceof CniError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  log.error(`internal error: ${e.stack ?? e.message}`);
  return new CniError(CNI_ERR.INTERNAL, `internal error: ${e.message}`, '');
}
