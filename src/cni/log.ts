// Logging as sriov-cni does it: `logLevel` and `logFile` from the config; without a file, stderr only.
// Never stdout: that carries the result or the error object and nothing else.
// The config is not trusted (see log-file.ts): the file is opened only where allowed and only if it is a regular
// file, and every line is escaped so that a value in it (a network name, a device, an error) stays one line.
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, writeSync } from 'node:fs';
import { escapeControl, LogFileRefused, openLogFile } from './log-file';
import type { LogConf, LogLevel } from './netconf';
import { writeStderr } from './stdio';

/** Before a call's config is read: info and above, to stderr. */
export const DEFAULT_LOG_CONF: LogConf = { level: 'info', file: null };

const RANK: Record<LogLevel, number> = { panic: 0, error: 1, warning: 2, info: 3, debug: 4 };

export class Logger {
  private conf: LogConf = DEFAULT_LOG_CONF;
  private context = '';
  private allowedDirs: readonly string[] = [];
  /** The open log file, null before the first line, 'stderr' once it was refused or failed. */
  private fd: number | 'stderr' | null = null;
  private toStderr: (text: string) => void = writeStderr;

  /**
   * `allowedDirs`: where `conf.file` may be (see log-file.ts allowedLogDirs); `toStderr`: where stderr lines go (the
   * process's stderr unless a caller runs the plugin in-process).
   */
  configure(conf: LogConf, context: string, allowedDirs: readonly string[], toStderr: (text: string) => void = writeStderr): void {
    this.conf = conf;
    this.toStderr = toStderr;
    this.context = context;
    this.allowedDirs = allowedDirs;
    this.close();
  }

  /** The log file, if one was opened, is closed (the next line opens it again). */
  close(): void {
    if (typeof this.fd === 'number') closeSync(this.fd);
    this.fd = null;
  }

  error(msg: string): void {
    this.write('error', msg);
  }
  warning(msg: string): void {
    this.write('warning', msg);
  }
  info(msg: string): void {
    this.write('info', msg);
  }
  debug(msg: string): void {
    this.write('debug', msg);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= RANK[this.conf.level];
  }

  private write(level: LogLevel, msg: string): void {
    if (!this.enabled(level)) return;
    const line = this.format(level, msg);
    const fd = this.target();
    if (fd !== 'stderr') {
      try {
        const bytes = Buffer.from(line);
        for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
        return;
      } catch (err) {
        // an unwritable log file must not fail the attachment (a full disk): stderr from now on
        this.fd = 'stderr';
        this.toStderr(this.format('warning', `logFile ${this.conf.file}: ${(err as Error).message}; logging to stderr`));
      }
    }
    this.toStderr(line);
  }

  private format(level: LogLevel, msg: string): string {
    // the process's age in every line: a CNI call is one process, so this is where its time went
    const age = `+${Math.round(process.uptime() * 1000)}ms`;
    return `${new Date().toISOString()} ${level} sriovctl-cni[${process.pid}] ${age} ${escapeControl(this.context + msg)}\n`;
  }

  /** Opens the log file on the first line written (nothing is created when nothing is logged). */
  private target(): number | 'stderr' {
    if (this.fd !== null) return this.fd;
    if (!this.conf.file) return (this.fd = 'stderr');
    try {
      this.fd = openLogFile(this.conf.file, this.allowedDirs);
    } catch (err) {
      if (!(err instanceof LogFileRefused)) throw err;
      this.fd = 'stderr';
      this.toStderr(this.format('warning', `logFile ${JSON.stringify(this.conf.file)} refused: ${err.message}; logging to stderr`));
    }
    return this.fd;
  }
}

/**
 * Each CNI call's own logger: its config says where its lines go, and the daemon runs many calls at once. `log`
 * writes to the logger of the call it runs in (runWithLogger), else to the process's own.
 */
const callLogger = new AsyncLocalStorage<Logger>();
const processLogger = new Logger();

export function runWithLogger<T>(logger: Logger, fn: () => T): T {
  return callLogger.run(logger, fn);
}

const current = (): Logger => callLogger.getStore() ?? processLogger;

export const log = {
  configure: (...args: Parameters<Logger['configure']>) => current().configure(...args),
  error: (msg: string) => current().error(msg),
  warning: (msg: string) => current().warning(msg),
  info: (msg: string) => current().info(msg),
  debug: (msg: string) => current().debug(msg),
  enabled: (level: LogLevel) => current().enabled(level),
};
