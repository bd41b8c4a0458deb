// Every step of lend and give-back, in order. Each is also a failpoint name (see failpoint.ts): a table-driven
// test crashes at every entry of these lists, so a new step cannot be added without its crash test.

export const LEND_STEPS = [
  /** The record exists on disk; nothing has changed yet. */
  'lend:recorded',
  /** PF-side VF settings applied (VF only). */
  'lend:vf-configured',
  /** The NIC's own altnames that would collide in the target were removed. */
  'lend:altnames-dropped',
  /** The NIC is in the target namespace, under its target name. */
  'lend:moved',
  /** MTU, MAC and admin state applied in the target. */
  'lend:configured',
] as const;

export const GIVE_BACK_STEPS = [
  /** The record says 'returning'; nothing has changed yet. */
  'return:started',
  /** The NIC is back in its home namespace (under its original or a fallback name). */
  'return:moved',
  /** Name, MTU, MAC, alias and altnames restored, then the per-link sysctls and the addresses (the link still down). */
  'return:addresses-restored',
  /** Admin state, routes (and the rest of the L3 snapshot) restored. */
  'return:restored',
  /** PF-side VF settings restored (VF only). */
  'return:vf-restored',
] as const;

/**
 * VFs created on a lent PF (vf-count.ts): steps of their own, since only a NIC with VFs takes them; their crash
 * test is in cli-vfs.test.ts.
 */
export const VF_COUNT_STEPS = [
  /** The PF's count at home is in the record; sriov_numvfs not written yet. */
  'vfs:recorded',
  /** On give-back, before the NIC moves: the count is back to the recorded one. */
  'return:vfs-restored',
] as const;

export type LendStep = (typeof LEND_STEPS)[number];
export type GiveBackStep = (typeof GIVE_BACK_STEPS)[number];
export type Step = LendStep | GiveBackStep | (typeof VF_COUNT_STEPS)[number];
