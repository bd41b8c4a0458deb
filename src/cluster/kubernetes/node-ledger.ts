// Where a k3d or kind node keeps the ledger. The host's state dir — whatever `--state-dir` named — is mounted at
// the default state dir inside every node, so everything in the node that uses the ledger uses its default and
// needs no configuration: the one-shot plugin kubelet's runtime runs (with the runtime's environment, which
// sriovctl does not set) and the installer DaemonSet's daemon (which takes its state dir from its own
// configuration and sends back any call whose state dir differs). Both write the host's ledger, where the host's
// `status`, `cleanup` and `cluster down` read the nodes' records.
import { DEFAULT_STATE_DIR } from '../../config';

/** The ledger's path inside a node: the plugin's and the daemon's default. */
export const NODE_STATE_DIR = DEFAULT_STATE_DIR;

/** The host's state dir as every node mounts it. */
export function nodeLedgerMount(hostStateDir: string): { hostPath: string; nodePath: string } {
  return { hostPath: hostStateDir, nodePath: NODE_STATE_DIR };
}
