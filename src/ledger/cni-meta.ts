// The shape of the CNI front door's part of a lend record (`meta`, see src/cni/attachment.ts), checked whenever a
// record is read: its IPAM type is run as root on DEL and GC, so a record whose meta is not this shape is
// reported and never acted upon; and the rule for the name of that IPAM plugin, which the CNI config is held to too.

/** Why `meta` is not (a part of) a CNI meta, or null when it is. */
export function cniMetaProblem(meta: unknown): string | null {
  if (!isObject(meta)) return `field 'meta' is not an object`;
  // a record written before its meta (the lend's first step) has none yet
  for (const k of ['network', 'cniVersion'] as const) {
    if (meta[k] !== undefined && typeof meta[k] !== 'string') return `field 'meta.${k}' is not a string`;
  }
  const ipam = meta.ipam;
  if (ipam === null || ipam === undefined) return null;
  if (!isObject(ipam) || typeof ipam.type !== 'string' || !isObject(ipam.conf)) return `field 'meta.ipam' is not { type, conf }`;
  const bad = pluginNameProblem(ipam.type);
  return bad ? `field 'meta.ipam.type': ${bad}` : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// The one rule for a delegate plugin's name (an IPAM `type`): a plain file name, looked up only in CNI_PATH. A
// name with a '/' or a '..' would run a program from anywhere — from a config, or from a planted ledger record.

/** Why `type` is not a plugin file name, or null when it is one. */
export function pluginNameProblem(type: string): string | null {
  if (type === '' || type === '.' || type === '..' || type.includes('/') || type.includes('\0')) {
    return `${JSON.stringify(type)} must be a plugin file name, not a path`;
  }
  return null;
}
