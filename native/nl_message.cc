#include "nl_message.h"

#include <cerrno>
#include <limits>

#include "sys_failure.h"

namespace sriovctl {

namespace {

// rta_len is 16 bits: a longer attribute would wrap and the kernel would read the rest of its payload as
// further attributes (an alias that carries an IFLA_IFNAME). Refuse instead.
constexpr size_t kMaxAttrLen = std::numeric_limits<uint16_t>::max();

void checkAttrLen(uint16_t type, size_t len) {
  if (len > kMaxAttrLen)
    throw SysFailure::withDetail(EMSGSIZE, "netlink attribute " + std::to_string(type & NLA_TYPE_MASK),
                                 std::to_string(len) + " bytes do not fit netlink's 16-bit attribute length");
}

}  // namespace

NlRequest::NlRequest(uint16_t type, uint16_t extraFlags) {
  buf_.reserve(256);
  appendZeroed(NLMSG_HDRLEN);
  nlmsghdr& h = header();
  h.nlmsg_type = type;
  h.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | extraFlags);
}

void NlRequest::appendZeroed(size_t len) {
  if (buf_.size() + len > kMaxRequest)
    throw SysFailure::withDetail(EMSGSIZE, "netlink request",
                                 "more than " + std::to_string(kMaxRequest) + " bytes (a value far too long)");
  buf_.resize(buf_.size() + len, 0);
  header().nlmsg_len = static_cast<uint32_t>(buf_.size());
}

void NlRequest::put(uint16_t type, const void* data, size_t len) {
  checkAttrLen(type, RTA_LENGTH(len));
  size_t off = buf_.size();
  appendZeroed(RTA_SPACE(len));
  auto* a = reinterpret_cast<rtattr*>(buf_.data() + off);
  a->rta_type = type;
  a->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
  if (len) std::memcpy(RTA_DATA(a), data, len);
}

size_t NlRequest::beginNest(uint16_t type, bool pureNest) {
  size_t off = buf_.size();
  put(static_cast<uint16_t>(pureNest ? type | NLA_F_NESTED : type), nullptr, 0);
  return off;
}

void NlRequest::endNest(size_t handle) {
  auto* a = reinterpret_cast<rtattr*>(buf_.data() + handle);
  checkAttrLen(a->rta_type, buf_.size() - handle);
  a->rta_len = static_cast<unsigned short>(buf_.size() - handle);
}

bool readString(const rtattr* a, std::string& out) {
  if (!a) return false;
  auto* p = static_cast<const char*>(attrData(a));
  out.assign(p, strnlen(p, attrLen(a)));
  return true;
}

std::vector<uint8_t> readBytes(const rtattr* a) {
  if (!a) return {};
  auto* p = static_cast<const uint8_t*>(attrData(a));
  return std::vector<uint8_t>(p, p + attrLen(a));
}

}  // namespace sriovctl
