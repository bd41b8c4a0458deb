// Network namespaces: open one as an fd, report its identity, create an anonymous one, and run work inside
// one on a short-lived thread. The JS main thread and libuv pool threads never change namespace: setns()
// only ever happens on a std::thread created here, which exits when the work is done.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace sriovctl {

struct NetnsHandle {
  int fd;
  uint64_t dev;  // nsfs device
  uint64_t ino;  // nsfs inode: the namespace's identity
};

// Opens `path` as a network namespace: first O_PATH (no side effect, never blocks) and checked to be on nsfs
// (fstatfs NSFS_MAGIC), then reopened read-only through that fd and checked to be a network namespace
// (ioctl NS_GET_NSTYPE). A FIFO, a device or a regular file is EINVAL at once, naming what it is.
NetnsHandle openNetns(const std::string& path);

// openNetns() of `path` resolved inside `root` (a container's root, /proc/<pid>/root) by openat2 with
// RESOLVE_IN_ROOT: absolute links and ".." stay inside it, magic links are refused (ELOOP).
NetnsHandle openNetnsInRoot(const std::string& root, const std::string& path);

// The network namespace of process `pid`, pinned by a pidfd (pidfd_open, open /proc/<pid>/ns/net, then the
// pidfd must show the process still alive): a pid reused meanwhile can never redirect it. ESRCH when the
// process is gone or exits meanwhile.
NetnsHandle openNetnsOfPid(int pid);

// dev + inode of an open namespace fd (fstat).
NetnsHandle netnsIdentity(int fd);

// A new namespace held only by the returned fd (no bind mount): gone when the fd and everything else that
// references it (sockets, moved-in links' users) are closed. Its loopback is brought up.
NetnsHandle createAnonymousNetns();

// Runs fn on a fresh thread that first enters nsFd (CLONE_NEWNET); rethrows fn's exception here.
// nsFd < 0 means "the caller's namespace": fn runs on the calling thread, which is already there.
void runInNetns(int nsFd, const std::function<void()>& fn);

}  // namespace sriovctl
