#include "peer_cred.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys_failure.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

namespace sriovctl {

PeerCred peerCred(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) throwErrno("getsockopt SO_PEERCRED");
  return PeerCred{cred.pid, cred.uid, cred.gid};
}

PeerPidfd peerPidfd(int fd) {
  PeerCred cred = peerCred(fd);
  int pidfd = -1;
  socklen_t len = sizeof pidfd;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0) return PeerPidfd{pidfd, cred.pid, cred.uid, true};
  if (errno != ENOPROTOOPT) throwErrno("getsockopt SO_PEERPIDFD");
  if (cred.pid <= 0) throw SysFailure::withDetail(ESRCH, "pidfd_open", "the peer has no pid in our pid namespace");
  pidfd = static_cast<int>(syscall(SYS_pidfd_open, cred.pid, 0));
  if (pidfd < 0) throwErrno("pidfd_open");
  // pidfd_open's descriptors are O_CLOEXEC already (the kernel sets it)
  return PeerPidfd{pidfd, cred.pid, cred.uid, false};
}

bool pidfdAlive(int pidfd) {
  if (syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0) return true;
  if (errno == ESRCH) return false;
  throwErrno("pidfd_send_signal");
}

}  // namespace sriovctl
