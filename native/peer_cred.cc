#include "peer_cred.h"

#include <sys/socket.h>

#include "sys_failure.h"

namespace sriovctl {

PeerCred peerCred(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) throwErrno("getsockopt SO_PEERCRED");
  return PeerCred{cred.pid, cred.uid, cred.gid};
}

}  // namespace sriovctl
