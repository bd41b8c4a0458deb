#include "deadline.h"

#include <algorithm>
#include <cerrno>

#include "sys_failure.h"

namespace sriovctl {

short waitReady(int fd, short events, Deadline deadline, const std::string& op) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, events, 0};
    int ready = poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 0x7fffffff)));
    if (ready > 0) return p.revents;
    if (ready == 0) {
      if (left <= 0) return 0;
      continue;  // woken early (a coarse clock): wait out the rest
    }
    if (errno != EINTR) throwErrno(op + " (poll)");
  }
}

}  // namespace sriovctl
