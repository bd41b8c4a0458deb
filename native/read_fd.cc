#include "read_fd.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "sys_failure.h"

namespace sriovctl {

std::string readToEnd(int fd, int timeoutMs, size_t maxBytes) {
  using Clock = std::chrono::steady_clock;
  const std::string op = "read fd " + std::to_string(fd);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  std::string data;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    int ready = left > 0 ? poll(&p, 1, static_cast<int>(left)) : 0;
    if (ready < 0) {
      if (errno == EINTR) continue;
      throwErrno(op + " (poll)");
    }
    if (ready == 0)
      throw SysFailure::withDetail(ETIMEDOUT, op, "no end of input within " + std::to_string(timeoutMs) + " ms");
    if (p.revents & POLLNVAL) return data;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return data;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EBADF) return data;
      throwErrno(op);
    }
    if (data.size() + static_cast<size_t>(n) > maxBytes)
      throw SysFailure::withDetail(EFBIG, op, "more than " + std::to_string(maxBytes) + " bytes");
    data.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace sriovctl
