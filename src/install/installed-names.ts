// The names the CNI plugin is installed under. kubelet (through Multus) runs a plugin by the `type` of its
// network config, which is the plugin's file name: `sriovctl-cni`, and optionally one more name — sriov-cni's
// `sriov` — so NetworkAttachmentDefinitions written for sriov-cni work unchanged. The second name is a hard link of
// the plugin's launcher, which runs the executable as `sriovctl-cni` whatever name it was called by.

export const PLUGIN_NAME = 'sriovctl-cni';

/** Names the executable itself answers to (src/sea/main.ts): never a plugin's second name. */
const RESERVED = new Set(['sriovctl', 'sriovctl-linux-amd64', 'sriovctl-linux-arm64', 'sriovctl-sysfs-write', PLUGIN_NAME]);

/** A CNI `type`: a plain file name in the CNI bin dir. */
const PLUGIN_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Why `name` cannot be the plugin's second name, or null when it can. */
export function pluginAliasProblem(name: string): string | null {
  if (!PLUGIN_FILE_NAME.test(name)) return `${JSON.stringify(name)} is not a plugin name (1-63 letters, digits, '.', '_', '-'; no '/')`;
  if (RESERVED.has(name)) return `${JSON.stringify(name)} is a name the executable already answers to`;
  return null;
}
