// /proc/sys/net/... as seen from a network namespace: opened on a thread inside it (see runInNetns).
#pragma once

#include <string>

namespace sriovctl {

// key: 'net/ipv4/ip_forward' (relative to /proc/sys). nsFd < 0: the caller's namespace.
std::string readSysctl(int nsFd, const std::string& key);
void writeSysctl(int nsFd, const std::string& key, const std::string& value);

}  // namespace sriovctl
