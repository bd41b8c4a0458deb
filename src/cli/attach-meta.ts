// What `attach` stores in its record's meta, so `detach` (maybe years later, another process) can undo it all.
export interface AttachMeta {
  /** The target as typed. */
  target: string;
  /** Present when attach created VFs: the PF's PCI address and its VF count before. */
  vfs?: { pf: string; before: number };
}

const KEY = 'attach';

export function attachMeta(meta: AttachMeta): Record<string, unknown> {
  return { [KEY]: meta };
}

/** The attach meta of a record, or null (a CNI or cluster record, or one written by an older version). */
export function readAttachMeta(meta: Record<string, unknown>): AttachMeta | null {
  const m = meta[KEY] as Partial<AttachMeta> | undefined;
  if (!m || typeof m.target !== 'string') return null;
  const vfs = m.vfs && typeof m.vfs.pf === 'string' && Number.isInteger(m.vfs.before) ? m.vfs : undefined;
  return { target: m.target, ...(vfs ? { vfs } : {}) };
}
