#include "ethtool.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sriovctl {

std::optional<DriverInfo> driverInfo(Connection& c, const std::string& name) {
  const std::string op = "SIOCETHTOOL ETHTOOL_GDRVINFO " + name;
  std::optional<DriverInfo> result;
  c.runInside(op, [&] {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throwErrno("socket(AF_INET) for ethtool");
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    ifr.ifr_data = reinterpret_cast<char*>(&info);
    int rc = ioctl(fd, SIOCETHTOOL, &ifr);
    int err = errno;
    ::close(fd);
    if (rc < 0) {
      if (err == ENODEV) return;
      throw SysFailure(err, op);
    }
    result = DriverInfo{std::string(info.driver, strnlen(info.driver, sizeof info.driver)),
                        std::string(info.bus_info, strnlen(info.bus_info, sizeof info.bus_info))};
  });
  return result;
}

}  // namespace sriovctl
