#include "read_fd.h"

#include <unistd.h>

#include <cerrno>

#include "deadline.h"
#include "sys_failure.h"

namespace sriovctl {

std::string readToEnd(int fd, int timeoutMs, size_t maxBytes) {
  const std::string op = "read fd " + std::to_string(fd);
  const Deadline deadline = deadlineIn(timeoutMs);
  std::string data;
  char buf[65536];
  for (;;) {
    short revents = waitReady(fd, POLLIN, deadline, op);
    if (revents == 0)
      throw SysFailure::withDetail(ETIMEDOUT, op, "no end of input within " + std::to_string(timeoutMs) + " ms");
    if (revents & POLLNVAL) return data;
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
