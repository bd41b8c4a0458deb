// Waiting on one descriptor until a deadline: the one shape every bounded wait in the addon takes (netlink
// replies, stdin, a child's pidfd).
#pragma once

#include <poll.h>

#include <chrono>
#include <string>

namespace sriovctl {

using Deadline = std::chrono::steady_clock::time_point;

inline Deadline deadlineIn(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

// poll(fd, events) until the deadline, retrying EINTR: the revents when ready, 0 once the deadline has passed.
// Throws SysFailure for a failed poll (`op` names it).
short waitReady(int fd, short events, Deadline deadline, const std::string& op);

}  // namespace sriovctl
