// SR-IOV VF settings as the PF's driver reports and accepts them (IFLA_VFINFO_LIST on the PF).
#pragma once

#include <linux/if_link.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hwaddr.h"
#include "nl_message.h"

namespace sriovctl {

struct VfInfo {
  uint32_t vf = 0;  // from ifla_vf_mac.vf, never the list position
  Mac mac{};
  uint32_t vlan = 0;
  uint32_t qos = 0;
  uint16_t vlanProto = 0x8100;  // host byte order
  int spoofchk = -1;            // -1: the driver does not report it
  int trust = -1;
  uint32_t linkState = IFLA_VF_LINK_STATE_AUTO;
  uint32_t minTxRate = 0;
  uint32_t maxTxRate = 0;
};

// Every IFLA_VF_INFO in the payload of an IFLA_VFINFO_LIST attribute (payload given explicitly: its
// 16-bit rta_len wraps on PFs with hundreds of VFs, see link.cc).
std::vector<VfInfo> parseVfInfoList(const void* payload, size_t len);

// One VF change; exactly one attribute goes on the wire per request.
struct VfChange {
  enum class Kind { Mac, Vlan, Spoofchk, Trust, LinkState, Rate };
  Kind kind = Kind::Mac;
  Mac mac{};
  uint32_t vlan = 0;
  uint32_t qos = 0;
  uint16_t vlanProto = 0x8100;  // host byte order; 0x8100 → legacy IFLA_VF_VLAN, else IFLA_VF_VLAN_LIST
  bool enabled = false;         // spoofchk / trust
  uint32_t linkState = IFLA_VF_LINK_STATE_AUTO;
  uint32_t minTxRate = 0;
  uint32_t maxTxRate = 0;
};

// RTM_NEWLINK on the PF: IFLA_VFINFO_LIST > IFLA_VF_INFO > the one attribute. Pure (no socket).
NlRequest encodeVfChange(int pfIndex, uint32_t vf, const VfChange& change);

// 'RTM_NEWLINK set vf mac', 'RTM_NEWLINK set vf vlan', …
std::string vfChangeOp(const VfChange& change);

}  // namespace sriovctl
