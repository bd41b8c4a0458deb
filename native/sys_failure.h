// The C++ side of the one error type: a failed syscall or kernel request, thrown from any thread (the JS
// thread or a worker) and turned into the TypeScript SysError by the N-API layer (napi_errors.cc).
#pragma once

#include <exception>
#include <string>

namespace sriovctl {

struct SysFailure : std::exception {
  int err;                    // positive errno
  std::string op;             // 'RTM_NEWLINK set name', 'setns', 'flock', …
  std::string kernelMessage;  // NLMSGERR_ATTR_MSG when the kernel gave one
  std::string detail;         // our own explanation (a timeout, a closed socket), added to the message

  SysFailure(int e, std::string o, std::string km = {});
  static SysFailure withDetail(int e, std::string o, std::string d);
  const char* what() const noexcept override { return op.c_str(); }
};

// Throws SysFailure from the current errno.
[[noreturn]] void throwErrno(const std::string& op);

// 'EEXIST' for EEXIST; 'E<number>' when the C library has no name for it.
std::string errnoName(int err);

}  // namespace sriovctl
