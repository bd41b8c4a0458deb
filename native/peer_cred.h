// Who is at the other end of a connected unix socket (SO_PEERCRED): the daemon serves root alone.
#pragma once

#include <sys/types.h>

namespace sriovctl {

struct PeerCred {
  pid_t pid;
  uid_t uid;
  gid_t gid;
};

// The credentials the kernel recorded when the peer connected; throws SysFailure on a descriptor that is not one.
PeerCred peerCred(int fd);

}  // namespace sriovctl
