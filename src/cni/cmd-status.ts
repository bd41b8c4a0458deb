// STATUS: ready when the state directory (the ledger) is writable, sysfs readable, and the IPAM plugin agrees.
import { closeSync, constants, openSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CNI_ERR, CniError } from './errors';
import { ipamOfCall, type Ipam } from './ipam';
import type { VerbHandler } from './verb';
import { failureOf } from '../lend';
import { ensureTrustedStateDir } from '../fs/secure-dir';
import { stateFileFlags } from '../fs/state-file';

export const cmdStatus: VerbHandler = async (call) => {
  const { config } = call;
  const dir = config.stateDir;
  try {
    ensureTrustedStateDir(dir);
  } catch (err) {
    throw new CniError(CNI_ERR.NOT_READY, failureOf(err).kind === 'Untrusted' ? (err as Error).message : `state directory ${dir} is not usable`, (err as Error).message);
  }
  try {
    const probe = join(dir, `.status-${process.pid}`);
    closeSync(openSync(probe, stateFileFlags(constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL), 0o600));
    unlinkSync(probe);
  } catch (err) {
    throw new CniError(CNI_ERR.NOT_READY, `state directory ${dir} is not writable`, (err as Error).message);
  }
  const pci = join(config.sysfsRoot, 'bus', 'pci', 'devices');
  try {
    readdirSync(pci);
  } catch (err) {
    throw new CniError(CNI_ERR.NOT_READY, `sysfs is not readable (${pci})`, (err as Error).message);
  }
  const ipam = ipamOfCall(call);
  if (ipam) await ipamStatus(ipam);
  return null;
};

/**
 * The IPAM plugin's own STATUS answer is passed on; an IPAM plugin that cannot be found or run (or speaks no
 * version of ours) means ADD cannot be served: the spec's 50, "plugin not available".
 */
async function ipamStatus(ipam: Ipam): Promise<void> {
  try {
    ipam.prepare();
  } catch (err) {
    if (err instanceof CniError) throw new CniError(CNI_ERR.NOT_READY, `${ipam.label} is not available: ${err.message}`, err.details);
    throw err;
  }
  await ipam.status();
}
