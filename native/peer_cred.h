// Who is at the other end of a connected unix socket: its credentials (SO_PEERCRED) and a pidfd of it
// (SO_PEERPIDFD), so what the daemon reads of the caller in /proc is known to be the caller's.
#pragma once

#include <stdint.h>
#include <sys/types.h>

namespace sriovctl {

struct PeerCred {
  pid_t pid;
  uid_t uid;
  gid_t gid;
};

// The credentials the kernel recorded when the peer connected; throws SysFailure on a descriptor that is not one.
PeerCred peerCred(int fd);

struct PeerPidfd {
  int pidfd;       // the caller's, O_CLOEXEC; the caller closes it
  pid_t pid;       // SO_PEERCRED's pid: what /proc names it by (0 when it is not in our pid namespace)
  uid_t uid;
  bool fromSocket; // SO_PEERPIDFD (Linux 6.5+); else pidfd_open(pid), which may name a process that took the pid
};

// A pidfd of the peer: SO_PEERPIDFD, or pidfd_open of SO_PEERCRED's pid where the kernel has no SO_PEERPIDFD.
PeerPidfd peerPidfd(int fd);

// The inode of the other end of the connected unix socket `fd` (sock_diag's UNIX_DIAG_PEER): a process holds that
// end when one of its descriptors is "socket:[<inode>]". Where the pidfd came from the pid (no SO_PEERPIDFD), this is
// how the daemon knows the process behind it is the one that connected, not one that took its pid since.
uint32_t unixPeerInode(int fd);

// Is the process behind `pidfd` still alive (pidfd_send_signal with signal 0)? Throws on anything but ESRCH.
bool pidfdAlive(int pidfd);

}  // namespace sriovctl
