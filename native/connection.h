// An rtnetlink connection bound to one namespace: the netlink socket (created on a thread inside that
// namespace) plus a duplicate of the namespace fd for the rare calls that need another socket there
// (ethtool ioctl, packet socket). nsFd -1 = the caller's own namespace. An exchange may run on a libuv pool thread
// (a move, see napi_rtnl.cc) while the JS thread has the same connection: each one holds exclusive() throughout, so
// requests and replies never interleave and the socket is not closed under one.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
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
  // Held for a whole exchange (or close): one at a time, whichever thread runs it.
  std::unique_lock<std::mutex> exclusive() { return std::unique_lock<std::mutex>(mutex_); }

 private:
  Connection(std::unique_ptr<NlSocket> nl, int nsFd) : netlink_(std::move(nl)), nsFd_(nsFd) {}
  std::unique_ptr<NlSocket> netlink_;
  int nsFd_;
  std::mutex mutex_;
};

}  // namespace sriovctl
