#include "sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "netns.h"
#include "sys_failure.h"

namespace sriovctl {

namespace {

std::string pathOf(const std::string& key) { return "/proc/sys/" + key; }

struct FileGuard {
  int fd;
  ~FileGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string readSysctl(int nsFd, const std::string& key) {
  const std::string op = "sysctl read " + key;
  std::string value;
  runInNetns(nsFd, [&] {
    FileGuard f{open(pathOf(key).c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throwErrno(op);
    char buf[4096];
    for (;;) {
      ssize_t n = read(f.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throwErrno(op);
      if (n == 0) break;
      value.append(buf, static_cast<size_t>(n));
    }
  });
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

void writeSysctl(int nsFd, const std::string& key, const std::string& value) {
  const std::string op = "sysctl write " + key;
  runInNetns(nsFd, [&] {
    FileGuard f{open(pathOf(key).c_str(), O_WRONLY | O_CLOEXEC)};
    if (f.fd < 0) throwErrno(op);
    // One write: the kernel parses a sysctl value from a single write call.
    ssize_t n;
    do n = write(f.fd, value.data(), value.size());
    while (n < 0 && errno == EINTR);
    if (n < 0) throwErrno(op);
    if (static_cast<size_t>(n) != value.size()) throw SysFailure::withDetail(EIO, op, "short write");
  });
}

}  // namespace sriovctl
