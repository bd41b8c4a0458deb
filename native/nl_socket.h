// A NETLINK_ROUTE socket: send one request, read until its ack (or NLMSG_DONE for a dump), keeping only what
// the kernel sent (sender port 0) addressed to our port with our (random) sequence number, as iproute2 does;
// receives sized with MSG_PEEK|MSG_TRUNC; one deadline (timeoutMs) for each whole exchange, so neither a reply
// that never comes nor a stream of messages we drop can hang us. (rtnetlink runs a request synchronously
// inside sendmsg(), under RTNL: a driver that blocks there blocks the send, which no deadline on this thread
// can bound.) The socket acts in the namespace of the thread that created it (see netns.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deadline.h"
#include "nl_message.h"
#include "sys_failure.h"

namespace sriovctl {

using MessageFn = std::function<void(const nlmsghdr*)>;

class NlSocket {
 public:
  // Opens a socket in the calling thread's network namespace; timeoutMs > 0 bounds each exchange.
  explicit NlSocket(int timeoutMs);
  ~NlSocket();
  NlSocket(const NlSocket&) = delete;
  NlSocket& operator=(const NlSocket&) = delete;

  // A change or a single get: sends, passes every reply to onReply, returns on the ack; throws SysFailure.
  void request(NlRequest& req, const std::string& op, const MessageFn& onReply = nullptr);

  // A dump: onMessage for every message until NLMSG_DONE. When the kernel flags the dump inconsistent
  // (NLM_F_DUMP_INTR), restart() is called and the dump is repeated (bounded).
  void dump(NlRequest& req, const std::string& op, const std::function<void()>& restart,
            const MessageFn& onMessage);

  void close();
  bool isOpen() const { return fd_ >= 0; }

  // NETLINK_GET_STRICT_CHK on or off; false when the kernel has no such option (before 4.20).
  bool setStrictCheck(bool on);

  // The network namespace's cookie (SO_NETNS_COOKIE): unique for the boot, never reused, unlike the namespace's
  // nsfs inode. nullopt where it cannot be had (a kernel before 5.14, qemu-user).
  std::optional<uint64_t> netnsCookie() const;

  // Our port id (the kernel's nl_pid for this socket) and the sequence number the next request will carry.
  uint32_t portId() const { return portId_; }
  uint32_t nextSeq() const { return seq_ + 1; }

 private:
  // One exchange; returns true when the dump was flagged interrupted.
  bool exchange(NlRequest& req, const std::string& op, const MessageFn& onMessage);
  // One datagram into rx_ (its length returned, its sender's port in senderPort); ETIMEDOUT past the deadline.
  size_t receive(const std::string& op, Deadline deadline, uint32_t& senderPort);

  int fd_ = -1;
  int timeoutMs_;
  uint32_t seq_;
  uint32_t portId_ = 0;
  std::vector<uint8_t> rx_;
};

// Strict checking for the life of one dump (when `on`): the kernel then honours the filter fields of the request
// (an address dump by index, a route dump by table and output device) and says so with NLM_F_DUMP_FILTERED. Off
// again afterwards: every other request is built for the lenient checks. A kernel without it sends everything, so
// callers still filter what they receive.
class StrictCheck {
 public:
  StrictCheck(NlSocket& s, bool on) : s_(on && s.setStrictCheck(true) ? &s : nullptr) {}
  ~StrictCheck() {
    if (s_) s_->setStrictCheck(false);
  }
  StrictCheck(const StrictCheck&) = delete;
  StrictCheck& operator=(const StrictCheck&) = delete;

 private:
  NlSocket* s_;
};

// Only the kernel sends from port 0: a datagram from any other socket (a process with CAP_NET_ADMIN can
// address ours) is dropped whole.
bool acceptsSender(uint32_t senderPort);
// A reply to our request: addressed to our port, carrying its sequence number.
bool acceptsMessage(const nlmsghdr* h, uint32_t portId, uint32_t seq);

// The failure an NLMSG_ERROR message carries (nullopt for an ack, error == 0). Pure: used by the socket
// and by unit tests on captured bytes. Reads NLMSGERR_ATTR_MSG when NLM_F_ACK_TLVS is set.
std::optional<SysFailure> failureFromError(const nlmsghdr* h, const std::string& op);

// NLMSG_DONE may carry an error too (a failed dump), with the same ext-ack TLVs.
std::optional<SysFailure> failureFromDone(const nlmsghdr* h, const std::string& op);

}  // namespace sriovctl
