#include "netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
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

// For the error message: what the path turned out to be instead of a namespace file.
const char* fileKind(int fd) {
  struct stat st{};
  if (fstat(fd, &st) < 0) return "unknown";
  switch (st.st_mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not nsfs";
  }
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

// The namespace behind `where`, an O_PATH fd (opening that touches nothing: a FIFO does not block, a device's
// open handler does not run). Only a file on nsfs is then opened for real, through the same inode
// (/proc/self/fd), so a swapped path cannot sneak in.
static NetnsHandle openNetnsAt(int where, const std::string& op) {
  struct statfs fs{};
  if (fstatfs(where, &fs) < 0) throwErrno(op + " (fstatfs)");
  if (static_cast<unsigned long>(fs.f_type) != NSFS_MAGIC) {
    throw SysFailure::withDetail(EINVAL, op, std::string("not a namespace file (") + fileKind(where) + ")");
  }
  const std::string self = "/proc/self/fd/" + std::to_string(where);
  FdGuard fd{open(self.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
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

NetnsHandle openNetns(const std::string& path) {
  const std::string op = "open netns " + path;
  FdGuard where{open(path.c_str(), O_PATH | O_CLOEXEC)};
  if (where.fd < 0) throwErrno(op);
  return openNetnsAt(where.fd, op);
}

NetnsHandle openNetnsInRoot(const std::string& root, const std::string& path) {
  const std::string op = "open netns " + path + " inside " + root;
  FdGuard rootFd{open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
  if (rootFd.fd < 0) throwErrno(op + " (root)");
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  // every symlink and ".." resolved as if `root` were "/"; no /proc magic link may jump out of it
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  FdGuard where{static_cast<int>(syscall(SYS_openat2, rootFd.fd, path.c_str(), &how, sizeof how))};
  if (where.fd < 0) throwErrno(op);
  return openNetnsAt(where.fd, op);
}

NetnsHandle openNetnsOfPid(int pid) {
  const std::string op = "open netns of pid " + std::to_string(pid);
  // The pidfd pins the process that holds `pid` now. Its namespace file is then opened by path, and the pidfd
  // asked afterwards whether that process is still alive: if it is, it held the pid all along (a pid is freed
  // only when its process is reaped), so the file opened was its own. Needs no privilege beyond the open.
  FdGuard pidfd{static_cast<int>(syscall(SYS_pidfd_open, pid, 0))};
  if (pidfd.fd < 0) throwErrno(op + " (pidfd_open)");
  NetnsHandle h = openNetns("/proc/" + std::to_string(pid) + "/ns/net");
  FdGuard owned{h.fd};
  pollfd p{pidfd.fd, POLLIN, 0};
  int exited = poll(&p, 1, 0);
  if (exited != 0) {
    if (exited < 0) throwErrno(op + " (poll pidfd)");
    throw SysFailure::withDetail(ESRCH, op, "the process exited while its namespace was being opened");
  }
  owned.release();
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
