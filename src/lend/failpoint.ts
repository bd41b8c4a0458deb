// Failpoints: SRIOVCTL_FAILPOINT=<step>[:crash|:error] makes the process SIGKILL itself (crash, the default) or
// throw (error) right after the kernel action of <step> and before the record notes it — the widest window for
// losing a NIC. Steps are listed in steps.ts. Unset (always, outside tests): a no-op costing one env read.
import { SysError } from '../errors';
import { sleepSync } from '../util/wait';
import type { Step } from './steps';

export function failpoint(step: Step): void {
  const spec = process.env.SRIOVCTL_FAILPOINT;
  if (!spec) return;
  const mode = spec.endsWith(':error') ? 'error' : 'crash';
  const name = spec.replace(/:(crash|error)$/, '');
  if (name !== step) return;
  if (mode === 'error') {
    throw new SysError(`failpoint ${step}`, { code: 'FAILPOINT', op: step });
  }
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is delivered asynchronously on some kernels: never continue past a crash failpoint.
  for (;;) sleepSync(1000);
}
