// Queueing disciplines of a link (RTM_GETQDISC / RTM_NEWQDISC): listed with their raw TCA_OPTIONS, and a root one
// put back from those same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nl_socket.h"

namespace sriovctl {

struct QdiscInfo {
  int index = 0;
  uint32_t handle = 0;
  uint32_t parent = 0;  // TC_H_ROOT, TC_H_INGRESS (clsact, ingress), or a class
  std::string kind;
  std::string options;  // TCA_OPTIONS as lower-case hex ('' when absent)
};

// An RTM_NEWQDISC with its TCA_KIND; false for anything else.
bool parseQdiscMessage(const nlmsghdr* h, QdiscInfo& out);

// The qdiscs of link `index`.
std::vector<QdiscInfo> listQdiscs(NlSocket& s, int index);

// The root qdisc of `index` replaced by `kind` with handle `handle` and the TCA_OPTIONS `optionsHex` (hex, even
// length: src/net checked it).
void replaceRootQdisc(NlSocket& s, int index, uint32_t handle, const std::string& kind, const std::string& optionsHex);

}  // namespace sriovctl
