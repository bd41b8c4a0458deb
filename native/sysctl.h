// /proc/sys/net/... as seen from a network namespace: opened on a thread inside it (see runInNetns).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sriovctl {

// key: 'net/ipv4/ip_forward' (relative to /proc/sys). nsFd < 0: the caller's namespace.
std::string readSysctl(int nsFd, const std::string& key);
void writeSysctl(int nsFd, const std::string& key, const std::string& value);
// Each keys[i] = values[i], all on one thread inside the namespace (one setns for the lot), each tried whatever the
// others did: per entry, nullopt when written, else the errno's name ('ENOENT': no such link or no IPv6 there).
std::vector<std::optional<std::string>> writeSysctlsEach(int nsFd, const std::vector<std::string>& keys, const std::vector<std::string>& values);

// Each key's value, all read on one thread inside the namespace: nullopt where it cannot be both read and written
// (no such entry, link or family there; read-only; a read refused), as readSysctlDirs leaves such entries out.
std::vector<std::optional<std::string>> readSysctlsEach(int nsFd, const std::vector<std::string>& keys);

using SysctlEntries = std::vector<std::pair<std::string, std::string>>;

// For each sysctl directory ('net/ipv4/conf/eth0'), every entry that can be both read and written, with its value,
// sorted by name — all directories read on one thread inside the namespace (one setns for the lot). Entries the owner
// cannot write (mc_forwarding) and those a read refuses (stable_secret before it is set: EIO) are left out; so are
// entries past maxEntries, and values longer than a page. nullopt for a directory that is not there (no such link, or
// no IPv6, in that namespace).
std::vector<std::optional<SysctlEntries>> readSysctlDirs(int nsFd, const std::vector<std::string>& dirs, size_t maxEntries);

}  // namespace sriovctl
