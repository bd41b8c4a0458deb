// Reading a descriptor to its end within a deadline and a size bound: poll + read, whatever the descriptor is
// (pipe, socket, file, terminal; blocking or not). The CNI plugin reads its stdin so: a runtime that never closes
// it must not hold the call forever.
#pragma once

#include <cstddef>
#include <string>

namespace sriovctl {

// Everything up to end of file (a closed or invalid descriptor reads as empty). Throws SysFailure ETIMEDOUT when
// the end has not come within timeoutMs, EFBIG past maxBytes, or the read's own errno.
std::string readToEnd(int fd, int timeoutMs, size_t maxBytes);

}  // namespace sriovctl
