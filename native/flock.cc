#include "flock.h"

#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "sys_failure.h"

namespace sriovctl {

bool lockFd(int fd, bool exclusive, int timeoutMs) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  // Non-blocking attempts with short sleeps: a blocking flock cannot be given a deadline.
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) throwErrno(exclusive ? "flock LOCK_EX" : "flock LOCK_SH");
    auto now = Clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(10));
  }
}

void unlockFd(int fd) {
  while (flock(fd, LOCK_UN) < 0) {
    if (errno != EINTR) throwErrno("flock LOCK_UN");
  }
}

}  // namespace sriovctl
