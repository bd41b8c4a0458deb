// The project's VfSetting (one change per request) as the VfInfo fields it changes.
'use strict';

/** { vlan, qos, proto } → { vlan, qos, vlanProto }; every other setting already uses VfInfo's names. */
function settingFields(setting) {
  if ('proto' in setting) return { vlan: setting.vlan, qos: setting.qos, vlanProto: setting.proto };
  return { ...setting };
}

/** The VF entry after `setting` is applied to `vf`. */
function applySetting(vf, setting) {
  return { ...vf, ...settingFields(setting) };
}

/** A VfInfo's values as the sequence of single-field settings that produce them. */
function settingsOf(v) {
  return [
    { mac: v.mac },
    { vlan: v.vlan, qos: v.qos, proto: v.vlanProto },
    { spoofchk: v.spoofchk },
    { trust: v.trust },
    { linkState: v.linkState },
    { minTxRate: v.minTxRate, maxTxRate: v.maxTxRate },
  ];
}

/** A locally administered unicast MAC that encodes `n` (distinct per VF and per scenario). */
function vfMac(tag, n) {
  return `02:5a:${tag.toString(16).padStart(2, '0')}:00:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;
}

const LINK_STATES = ['auto', 'enable', 'disable'];

/** Distinct values for every VF, so a VF parsed at the wrong position or with the wrong number shows. */
function distinctTable(tag, count) {
  return Array.from({ length: count }, (_, i) => ({
    vf: i,
    mac: vfMac(tag, i),
    vlan: (i % 4094) + 1,
    qos: i % 8,
    vlanProto: i % 2 ? '802.1ad' : '802.1Q',
    spoofchk: i % 2 === 0,
    trust: i % 3 === 0,
    linkState: LINK_STATES[i % 3],
    minTxRate: i % 5,
    maxTxRate: (i % 5) * 100 + 100,
  }));
}

module.exports = { settingFields, applySetting, settingsOf, vfMac, distinctTable };
