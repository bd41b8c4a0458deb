// CHECK's comparison of a VF's PF-side settings with what the config asks for (pure: no kernel access).
import type { VfRequest } from '../lend';
import type { VfInfo } from '../net/types';

/** One line per configured setting the VF does not have; settings the config leaves out are not compared. */
export function vfDifferences(want: VfRequest, have: VfInfo, label: string): string[] {
  const out: string[] = [];
  const differ = (what: string, w: unknown, h: unknown) => out.push(`${label}: ${what} is ${String(h)}, config says ${String(w)}`);
  if (want.mac !== undefined && want.mac !== have.mac) differ('MAC', want.mac, have.mac);
  if (want.vlan) {
    if (want.vlan.vlan !== have.vlan) differ('VLAN', want.vlan.vlan, have.vlan);
    if (want.vlan.qos !== have.qos) differ('VLAN QoS', want.vlan.qos, have.qos);
    if (have.vlan !== 0 && want.vlan.proto !== have.vlanProto) differ('VLAN protocol', want.vlan.proto, have.vlanProto);
  }
  if (want.spoofchk !== undefined && have.spoofchk !== null && want.spoofchk !== have.spoofchk) differ('spoofchk', onOff(want.spoofchk), onOff(have.spoofchk));
  if (want.trust !== undefined && have.trust !== null && want.trust !== have.trust) differ('trust', onOff(want.trust), onOff(have.trust));
  if (want.linkState !== undefined && want.linkState !== have.linkState) differ('link_state', want.linkState, have.linkState);
  if (want.minTxRate !== undefined && want.minTxRate !== have.minTxRate) differ('min_tx_rate', want.minTxRate, have.minTxRate);
  if (want.maxTxRate !== undefined && want.maxTxRate !== have.maxTxRate) differ('max_tx_rate', want.maxTxRate, have.maxTxRate);
  return out;
}

function onOff(v: boolean): string {
  return v ? 'on' : 'off';
}
