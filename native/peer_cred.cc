#include "peer_cred.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

namespace {

// Asks sock_diag, through the NETLINK_SOCK_DIAG socket `nl`, for the peer of the unix socket with inode `ino`.
uint32_t askPeerInode(int nl, ino_t ino) {
  struct {
    nlmsghdr nlh;
    unix_diag_req req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof msg;
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST;
  msg.req.sdiag_family = AF_UNIX;
  msg.req.udiag_states = ~0u;
  msg.req.udiag_ino = static_cast<uint32_t>(ino);
  msg.req.udiag_show = UDIAG_SHOW_PEER;
  // no cookie to check (INET_DIAG_NOCOOKIE): the inode is that of a socket we hold open
  msg.req.udiag_cookie[0] = msg.req.udiag_cookie[1] = ~0u;
  if (send(nl, &msg, sizeof msg, 0) < 0) throwErrno("sock_diag unix request");
  alignas(nlmsghdr) char buf[8192];
  ssize_t got = recv(nl, buf, sizeof buf, 0);
  if (got < 0) throwErrno("sock_diag unix reply");
  int left = static_cast<int>(got);
  for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      int err = -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
      throw SysFailure(err ? err : EPROTO, "sock_diag unix");
    }
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
    auto* d = static_cast<unix_diag_msg*>(NLMSG_DATA(h));
    int attrs = static_cast<int>(h->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof *d));
    for (auto* a = reinterpret_cast<rtattr*>(d + 1); RTA_OK(a, attrs); a = RTA_NEXT(a, attrs)) {
      if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t)) return *static_cast<uint32_t*>(RTA_DATA(a));
    }
  }
  throw SysFailure::withDetail(ENOTCONN, "sock_diag unix", "the socket has no peer");
}

}  // namespace

uint32_t unixPeerInode(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) throwErrno("fstat");
  int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) throwErrno("socket NETLINK_SOCK_DIAG");
  try {
    uint32_t peer = askPeerInode(nl, st.st_ino);
    close(nl);
    return peer;
  } catch (...) {
    close(nl);
    throw;
  }
}

}  // namespace sriovctl
