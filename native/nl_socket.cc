#include "nl_socket.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "deadline.h"

namespace sriovctl {

namespace {

constexpr size_t kInitialReceiveBuffer = 32 * 1024;
constexpr int kMaxDumpAttempts = 10;

std::string extAckMessage(const void* tlvs, size_t len) {
  std::string msg;
  forEachAttr(tlvs, len, [&](const rtattr* a) {
    if (attrType(a) == NLMSGERR_ATTR_MSG) readString(a, msg);
  });
  return msg;
}

// The ext-ack TLVs follow the error header and (unless NLM_F_CAPPED) the echoed request's payload.
std::string kernelMessageOf(const nlmsghdr* h, const nlmsgerr* e) {
  if (!(h->nlmsg_flags & NLM_F_ACK_TLVS)) return {};
  size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nlmsgerr));
  if (!(h->nlmsg_flags & NLM_F_CAPPED) && e->msg.nlmsg_len > NLMSG_HDRLEN)
    off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
  if (off >= h->nlmsg_len) return {};
  return extAckMessage(reinterpret_cast<const uint8_t*>(h) + off, h->nlmsg_len - off);
}

// The kernel reports -errno, from -1 to -MAX_ERRNO (4095); anything else (INT_MIN cannot even be negated)
// is a malformed message.
bool isErrno(int negative) { return negative < 0 && negative >= -4095; }

}  // namespace

std::optional<SysFailure> failureFromError(const nlmsghdr* h, const std::string& op) {
  auto* e = familyHeader<nlmsgerr>(h);
  if (!e) return SysFailure::withDetail(EBADMSG, op, "truncated NLMSG_ERROR");
  if (e->error == 0) return std::nullopt;
  if (!isErrno(e->error)) return SysFailure::withDetail(EBADMSG, op, "NLMSG_ERROR with error " + std::to_string(e->error));
  return SysFailure(-e->error, op, kernelMessageOf(h, e));
}

std::optional<SysFailure> failureFromDone(const nlmsghdr* h, const std::string& op) {
  auto* err = familyHeader<int>(h);
  if (!err || *err >= 0) return std::nullopt;
  if (!isErrno(*err)) return SysFailure::withDetail(EBADMSG, op, "NLMSG_DONE with error " + std::to_string(*err));
  std::string km;
  if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
    size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(int));
    if (off < h->nlmsg_len) km = extAckMessage(reinterpret_cast<const uint8_t*>(h) + off, h->nlmsg_len - off);
  }
  return SysFailure(-*err, op, km);
}

// Sequence numbers start at a random value: a process that could guess ours (time() was guessable) could queue a
// forged reply before the kernel's. Replies are also checked to come from the kernel (acceptsSender).
static uint32_t randomSeq() {
  uint32_t seq = 0;
  if (getrandom(&seq, sizeof seq, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof seq)) throwErrno("getrandom");
  return seq;
}

NlSocket::NlSocket(int timeoutMs) : timeoutMs_(timeoutMs), seq_(randomSeq()) {
  if (timeoutMs <= 0) throw SysFailure::withDetail(EINVAL, "socket(NETLINK_ROUTE)", "the reply timeout must be positive");
  fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) throwErrno("socket(NETLINK_ROUTE)");
  try {
    int one = 1;
    // Extended ack: the kernel's own sentence with every error. Capped ack: it does not echo our request.
    if (setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one) < 0) throwErrno("setsockopt(NETLINK_EXT_ACK)");
    if (setsockopt(fd_, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one) < 0) throwErrno("setsockopt(NETLINK_CAP_ACK)");
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) < 0) throwErrno("bind(NETLINK_ROUTE)");
    socklen_t len = sizeof local;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) < 0) throwErrno("getsockname(NETLINK_ROUTE)");
    portId_ = local.nl_pid;
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  rx_.resize(kInitialReceiveBuffer);
}

NlSocket::~NlSocket() { close(); }

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71  // asm-generic/socket.h, Linux 5.14
#endif

bool NlSocket::setStrictCheck(bool on) {
  int v = on ? 1 : 0;
  return setsockopt(fd_, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &v, sizeof v) == 0;
}

std::optional<uint64_t> NlSocket::netnsCookie() const {
  uint64_t cookie = 0;
  socklen_t len = sizeof cookie;
  if (getsockopt(fd_, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) == 0 && len == sizeof cookie) return cookie;
  // a kernel before 5.14 says ENOPROTOOPT; qemu-user (an arm64 build run on amd64) does not translate the option
  // and says EINVAL or EOPNOTSUPP: no cookie, the namespace known by its inode as before
  if (errno == ENOPROTOOPT || errno == EINVAL || errno == EOPNOTSUPP) return std::nullopt;
  throw SysFailure(errno, "getsockopt SO_NETNS_COOKIE");
}

void NlSocket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

size_t NlSocket::receive(const std::string& op, Deadline deadline, uint32_t& senderPort) {
  for (;;) {
    // The deadline covers the whole exchange, not each datagram: messages we drop (stale replies, another
    // socket's forgeries) must not keep us waiting forever either.
    if (waitReady(fd_, POLLIN, deadline, op) == 0)
      throw SysFailure::withDetail(ETIMEDOUT, op, "no reply within " + std::to_string(timeoutMs_) + " ms");
    // Size first: a PF with hundreds of VFs answers with one message larger than 64 KiB.
    ssize_t want = recv(fd_, nullptr, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (want < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      throwErrno(op + " (recv)");
    }
    if (static_cast<size_t>(want) > rx_.size()) rx_.resize(static_cast<size_t>(want));
    sockaddr_nl from{};
    socklen_t fromLen = sizeof from;
    ssize_t got = recvfrom(fd_, rx_.data(), rx_.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &fromLen);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      throwErrno(op + " (recv)");
    }
    senderPort = from.nl_pid;
    return static_cast<size_t>(got);
  }
}

bool acceptsSender(uint32_t senderPort) { return senderPort == 0; }

bool acceptsMessage(const nlmsghdr* h, uint32_t portId, uint32_t seq) {
  return h->nlmsg_pid == portId && h->nlmsg_seq == seq;
}

bool NlSocket::exchange(NlRequest& req, const std::string& op, const MessageFn& onMessage) {
  if (fd_ < 0) throw SysFailure::withDetail(EBADF, op, "socket closed");
  req.setSeq(++seq_);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  for (;;) {
    ssize_t sent = sendto(fd_, req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel);
    if (sent >= 0) break;
    if (errno != EINTR) throwErrno(op + " (send)");
  }
  const bool dump = req.isDump();
  bool interrupted = false;
  std::optional<SysFailure> failure;
  bool finished = false;
  const Deadline deadline = deadlineIn(timeoutMs_);
  while (!finished) {
    uint32_t sender = 0;
    size_t len = receive(op, deadline, sender);
    if (!acceptsSender(sender)) continue;
    forEachMessage(rx_.data(), len, [&](const nlmsghdr* h) {
      // Replies to an earlier request that timed out arrive late: never mistake them for ours.
      if (finished || !acceptsMessage(h, portId_, req.seq())) return;
      if (h->nlmsg_flags & NLM_F_DUMP_INTR) interrupted = true;
      if (h->nlmsg_type == NLMSG_ERROR) {
        failure = failureFromError(h, op);
        finished = true;
      } else if (h->nlmsg_type == NLMSG_DONE) {
        failure = failureFromDone(h, op);
        finished = dump;  // a stray DONE ends only dumps
      } else if (h->nlmsg_type >= NLMSG_MIN_TYPE && onMessage) {
        onMessage(h);
      }
    });
  }
  if (failure) throw *failure;
  return interrupted;
}

void NlSocket::request(NlRequest& req, const std::string& op, const MessageFn& onReply) {
  exchange(req, op, onReply);
}

void NlSocket::dump(NlRequest& req, const std::string& op, const std::function<void()>& restart,
                    const MessageFn& onMessage) {
  for (int attempt = 1;; ++attempt) {
    if (!exchange(req, op, onMessage)) return;
    if (attempt == kMaxDumpAttempts) throw SysFailure::withDetail(EAGAIN, op, "dump kept changing (NLM_F_DUMP_INTR)");
    restart();
  }
}

}  // namespace sriovctl
