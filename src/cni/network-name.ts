// libcni's rule for a network name (utils.ValidateNetworkName, checked by skel on every verb): a letter or digit,
// then letters, digits, '_', '.' and '-'. The name also lands in log lines and ledger records, where this rule
// keeps it to one safe token.

export function validNetworkName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name);
}
