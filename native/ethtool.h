// ethtool ioctls (SIOCETHTOOL) on an AF_INET socket created inside the link's namespace.
#pragma once

#include <optional>
#include <string>

#include "connection.h"

namespace sriovctl {

struct DriverInfo {
  std::string driver;
  std::string busInfo;  // a PCI address for PCI NICs; '' for virtual links
};

// ETHTOOL_GDRVINFO for `name` in the connection's namespace; nullopt when there is no such link.
std::optional<DriverInfo> driverInfo(Connection& c, const std::string& name);

}  // namespace sriovctl
