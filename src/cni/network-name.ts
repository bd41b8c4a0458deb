// libcni's rule for a network name (utils.ValidateNetworkName, checked by skel on every verb; cniValidNameChars in
// pkg/utils), which container IDs share: a letter or digit, then letters, digits, '_', '.' and '-'. The name also
// lands in log lines and ledger records, where this rule keeps it to one safe token.
export const CNI_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function validNetworkName(name: string): boolean {
  return CNI_NAME_RULE.test(name);
}
