// The one rule for a delegate plugin's name (an IPAM `type`): a plain file name, looked up only in CNI_PATH. A
// name with a '/' or a '..' would run a program from anywhere — from a config, or from a planted ledger record.

/** Why `type` is not a plugin file name, or null when it is one. */
export function pluginNameProblem(type: string): string | null {
  if (type === '' || type === '.' || type === '..' || type.includes('/') || type.includes('\0')) {
    return `${JSON.stringify(type)} must be a plugin file name, not a path`;
  }
  return null;
}
