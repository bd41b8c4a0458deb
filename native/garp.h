// Gratuitous ARP: tell the segment that an IPv4 address now lives behind a link's MAC (after a move).
#pragma once

#include <string>

#include "connection.h"
#include "hwaddr.h"

namespace sriovctl {

// One ARP request with sender = target = ipv4, broadcast from the link, via a packet socket made inside
// the connection's namespace. Throws SysFailure (e.g. ENETDOWN when the link is down).
void sendGratuitousArp(Connection& c, int index, const Mac& mac, const std::string& ipv4);

}  // namespace sriovctl
