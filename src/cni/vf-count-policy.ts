// The plugin's give-backs and a PF's recorded VF count: see CNI_VF_COUNT.
/**
 * How the plugin's give-backs (DEL, GC, an ADD's undo) treat a recorded VF count: no wait for a VFIO holder. The
 * plugin never changes a VF count (only `attach --vfs` and `cluster up` do, for their own records), so a count
 * found on an attachment's record is not the pod's business: if it cannot be put back at once, the NIC still goes
 * home, the record stays with the count (cleanup finishes it) and the call succeeds. Failing the DEL instead would
 * make the runtime retry it, and keep the pod from being deleted, for as long as a VM holds a VF; waiting would
 * hold up every pod deletion on the node.
 */
export const CNI_VF_COUNT = { holderWaitMs: 0 } as const;
