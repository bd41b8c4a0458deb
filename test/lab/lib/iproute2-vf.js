// The VF table as iproute2 sees and sets it: the independent witness for the addon's VF paths.
// Converts `ip -j -d link show` vfinfo_list entries to the project's VfInfo shape, and VfSetting-shaped
// changes to `ip link set <pf> vf <n> ...` arguments.
'use strict';

const { ip, ipBatch, ipJson } = require('./shell');

/** iproute2's JSON for one VF (vfinfo_list[i]) → VfInfo. */
function vfFromIproute2(j) {
  // vlan_list is present when the kernel sent IFLA_VF_VLAN_LIST; iproute2 leaves out zero fields and 802.1Q.
  const vlanEntry = (j.vlan_list && j.vlan_list[0]) || {};
  return {
    vf: j.vf,
    mac: j.address,
    vlan: vlanEntry.vlan ?? j.vlan ?? 0,
    qos: vlanEntry.qos ?? j.qos ?? 0,
    vlanProto: vlanEntry.protocol ?? '802.1Q',
    spoofchk: j.spoofchk ?? null,
    trust: j.trust ?? null,
    linkState: j.link_state ?? 'auto',
    minTxRate: j.rate?.min_tx ?? 0,
    maxTxRate: j.rate?.max_tx ?? j.tx_rate ?? 0,
  };
}

/** The PF's VF table according to iproute2 (sorted by VF number). */
function iproute2VfTable(pfName, netns) {
  const nsArgs = netns ? ['-n', netns] : [];
  const [link] = ipJson(...nsArgs, '-d', 'link', 'show', 'dev', pfName);
  return (link.vfinfo_list || []).map(vfFromIproute2).sort((a, b) => a.vf - b.vf);
}

/** A partial VfInfo → the words after `ip link set dev <pf> vf <n>`. */
function iproute2VfArgs(v) {
  const a = [];
  if (v.mac !== undefined) a.push('mac', v.mac);
  if (v.vlan !== undefined) {
    a.push('vlan', String(v.vlan));
    if (v.qos !== undefined) a.push('qos', String(v.qos));
    if (v.vlanProto !== undefined) a.push('proto', v.vlanProto);
  }
  if (v.spoofchk !== undefined) a.push('spoofchk', v.spoofchk ? 'on' : 'off');
  if (v.trust !== undefined) a.push('trust', v.trust ? 'on' : 'off');
  if (v.linkState !== undefined) a.push('state', v.linkState);
  if (v.minTxRate !== undefined) a.push('min_tx_rate', String(v.minTxRate));
  if (v.maxTxRate !== undefined) a.push('max_tx_rate', String(v.maxTxRate));
  return a;
}

/** Apply partial VfInfo values with iproute2 (one `ip` process for every VF). */
function iproute2SetVfs(pfName, values) {
  ipBatch(values.map((v) => ['link', 'set', 'dev', pfName, 'vf', String(v.vf), ...iproute2VfArgs(v)].join(' ')));
}

/** One VF change through iproute2; returns the failure's stderr or null when it succeeded. */
function iproute2TrySetVf(pfName, vf, v) {
  try {
    ip('link', 'set', 'dev', pfName, 'vf', String(vf), ...iproute2VfArgs(v));
    return null;
  } catch (err) {
    return (err.stderr || err.message).trim();
  }
}

module.exports = { vfFromIproute2, iproute2VfTable, iproute2VfArgs, iproute2SetVfs, iproute2TrySetVf };
