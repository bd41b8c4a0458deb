// Logging as sriov-cni does it: `logLevel` and `logFile` from the config; without a file, stderr only.
// Never stdout: that carries the result or the error object and nothing else.
import { appendFileSync } from 'node:fs';
import type { LogConf, LogLevel } from './netconf';
import { writeStderr } from './stdio';

const RANK: Record<LogLevel, number> = { panic: 0, error: 1, warning: 2, info: 3, debug: 4 };

export class Logger {
  private conf: LogConf = { level: 'info', file: null };
  private context = '';

  configure(conf: LogConf, context: string): void {
    this.conf = conf;
    this.context = context;
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
    // the process's age in every line: a CNI call is one process, so this is where its time went
    const age = `+${Math.round(process.uptime() * 1000)}ms`;
    const line = `${new Date().toISOString()} ${level} sriovctl-cni[${process.pid}] ${age} ${this.context}${msg}\n`;
    if (this.conf.file) {
      try {
        appendFileSync(this.conf.file, line, { mode: 0o600 });
        return;
      } catch {
        // an unwritable log file must not fail the attachment: fall back to stderr
      }
    }
    writeStderr(line);
  }
}

/** The process's one logger (a fresh process per CNI call). */
export const log = new Logger();
