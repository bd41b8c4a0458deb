#include "sys_failure.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace sriovctl {

SysFailure::SysFailure(int e, std::string o, std::string km)
    : err(e), op(std::move(o)), kernelMessage(std::move(km)) {}

SysFailure SysFailure::withDetail(int e, std::string o, std::string d) {
  SysFailure f(e, std::move(o));
  f.detail = std::move(d);
  return f;
}

void throwErrno(const std::string& op) { throw SysFailure(errno, op); }

std::string errnoName(int err) {
  const char* name = strerrorname_np(err);
  return name ? std::string(name) : "E" + std::to_string(err);
}

}  // namespace sriovctl
