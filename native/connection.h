// An rtnetlink connection bound to one namespace: the netlink socket (created on a thread inside that
// namespace) plus a duplicate of the namespace fd for the rare calls that need another socket there
// (ethtool ioctl, packet socket). nsFd -1 = the caller's own namespace.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "nl_socket.h"

namespace sriovctl {

class Connection {
 public:
  static std::shared_ptr<Connection> open(int nsFd, int timeoutMs);
  ~Connection();

  NlSocket& netlink() { return *netlink_; }
  // Runs fn on a thread inside this connection's namespace (EBADF once closed).
  void runInside(const std::string& op, const std::function<void()>& fn);
  void close();

 private:
  Connection(std::unique_ptr<NlSocket> nl, int nsFd) : netlink_(std::move(nl)), nsFd_(nsFd) {}
  std::unique_ptr<NlSocket> netlink_;
  int nsFd_;
};

}  // namespace sriovctl
