// Waiting for a spawned process: its exit code and everything it wrote, killed after `timeoutMs`.
import type { ChildProcess } from 'node:child_process';

export interface ProcessOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function collectOutput(child: ChildProcess, timeoutMs: number): Promise<ProcessOutput> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
