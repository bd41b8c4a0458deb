#include "connection.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "netns.h"

namespace sriovctl {

std::shared_ptr<Connection> Connection::open(int nsFd, int timeoutMs) {
  std::unique_ptr<NlSocket> nl;
  runInNetns(nsFd, [&] { nl = std::make_unique<NlSocket>(timeoutMs); });
  int ownNsFd = -1;
  if (nsFd >= 0) {
    ownNsFd = fcntl(nsFd, F_DUPFD_CLOEXEC, 0);
    if (ownNsFd < 0) throwErrno("dup(netns fd)");
  }
  return std::shared_ptr<Connection>(new Connection(std::move(nl), ownNsFd));
}

void Connection::runInside(const std::string& op, const std::function<void()>& fn) {
  if (!netlink_->isOpen()) throw SysFailure::withDetail(EBADF, op, "socket closed");
  runInNetns(nsFd_, fn);
}

Connection::~Connection() { close(); }

void Connection::close() {
  auto one = exclusive();
  netlink_->close();
  if (nsFd_ >= 0) ::close(nsFd_);
  nsFd_ = -1;
}

}  // namespace sriovctl
