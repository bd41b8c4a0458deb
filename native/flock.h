// flock(2) with a timeout, on a file descriptor the caller owns.
#pragma once

namespace sriovctl {

// true when the lock is held; false when timeoutMs passed first (0 = one attempt). Throws SysFailure.
bool lockFd(int fd, bool exclusive, int timeoutMs);
void unlockFd(int fd);

}  // namespace sriovctl
