#include "netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "sys_failure.h"

namespace sriovctl {

namespace {

struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

void bringLoopbackUp() {
  FdGuard s{socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) throwErrno("socket(AF_INET) for lo");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(s.fd, SIOCGIFFLAGS, &ifr) < 0) throwErrno("SIOCGIFFLAGS lo");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (ioctl(s.fd, SIOCSIFFLAGS, &ifr) < 0) throwErrno("SIOCSIFFLAGS lo up");
}

}  // namespace

NetnsHandle netnsIdentity(int fd) {
  struct stat st{};
  if (fstat(fd, &st) < 0) throwErrno("fstat(netns)");
  return NetnsHandle{fd, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

// NS_GET_NSTYPE where the ioctl exists. Under an emulator that does not pass it through (qemu-user answers
// ENOSYS: the arm64 executable tested on amd64), an nsfs file (fstatfs) is a network namespace when a throwaway
// thread can enter it as one (setns checks the type); the thread exits at once.
static int namespaceType(int fd) {
  int type = ioctl(fd, NS_GET_NSTYPE);
  if (type >= 0 || errno != ENOSYS) return type;
  struct statfs sfs{};
  if (fstatfs(fd, &sfs) < 0) return -1;
  if (sfs.f_type != NSFS_MAGIC) {
    errno = ENOTTY;
    return -1;
  }
  bool entered = false;
  std::thread([&] { entered = setns(fd, CLONE_NEWNET) == 0; }).join();
  return entered ? CLONE_NEWNET : 0;
}

NetnsHandle openNetns(const std::string& path) {
  const std::string op = "open netns " + path;
  FdGuard fd{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) throwErrno(op);
  int type = namespaceType(fd.fd);
  if (type < 0) {
    // Not an nsfs file at all (a regular file, a directory): the kernel says ENOTTY.
    throw SysFailure::withDetail(errno == ENOTTY ? EINVAL : errno, op, "not a namespace file");
  }
  if (type != CLONE_NEWNET) throw SysFailure::withDetail(EINVAL, op, "not a network namespace");
  NetnsHandle h = netnsIdentity(fd.fd);
  fd.release();
  return h;
}

NetnsHandle createAnonymousNetns() {
  int fd = -1;
  // A throwaway thread owns the new namespace for a moment; once it exits, only our fd holds it.
  std::exception_ptr failure;
  std::thread t([&] {
    try {
      if (unshare(CLONE_NEWNET) < 0) throwErrno("unshare(CLONE_NEWNET)");
      FdGuard ns{open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)};
      if (ns.fd < 0) throwErrno("open /proc/thread-self/ns/net");
      bringLoopbackUp();
      fd = ns.release();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  t.join();
  if (failure) std::rethrow_exception(failure);
  FdGuard owned{fd};
  NetnsHandle h = netnsIdentity(fd);
  owned.release();
  return h;
}

void runInNetns(int nsFd, const std::function<void()>& fn) {
  if (nsFd < 0) {
    fn();
    return;
  }
  std::exception_ptr failure;
  std::thread t([&] {
    try {
      if (setns(nsFd, CLONE_NEWNET) < 0) throwErrno("setns(CLONE_NEWNET)");
      fn();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sriovctl
