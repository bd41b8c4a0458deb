// Building and reading netlink messages. Every size and alignment comes from the UAPI macros
// (NLMSG_ALIGN, NLMSG_HDRLEN, RTA_ALIGN, RTA_LENGTH, RTA_OK/RTA_NEXT) and sizeof of the UAPI structs.
#pragma once

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace sriovctl {

// One request: nlmsghdr, then the family header (ifinfomsg, ifaddrmsg, rtmsg, …), then attributes.
// NLM_F_REQUEST | NLM_F_ACK are always set: every request is acknowledged so errors are never silent.
class NlRequest {
 public:
  // No request we build comes near this; anything larger is a value that slipped past validation.
  static constexpr size_t kMaxRequest = 64 * 1024;

  template <class FamilyHeader>
  static NlRequest make(uint16_t type, uint16_t extraFlags) {
    NlRequest r(type, extraFlags);
    r.appendZeroed(NLMSG_ALIGN(sizeof(FamilyHeader)));
    return r;
  }

  // The family header, valid until the next append (the buffer may grow).
  template <class FamilyHeader>
  FamilyHeader& family() {
    return *reinterpret_cast<FamilyHeader*>(buf_.data() + NLMSG_HDRLEN);
  }

  // Throws SysFailure EMSGSIZE when the attribute cannot be encoded (over 16-bit rta_len, or the request limit).
  void put(uint16_t type, const void* data, size_t len);
  void putU8(uint16_t type, uint8_t v) { put(type, &v, sizeof v); }
  void putU32(uint16_t type, uint32_t v) { put(type, &v, sizeof v); }
  void putS32(uint16_t type, int32_t v) { put(type, &v, sizeof v); }
  // NUL-terminated, as the kernel's NLA_STRING / NLA_NUL_STRING policies accept.
  void putString(uint16_t type, const std::string& s) { put(type, s.c_str(), s.size() + 1); }
  template <class Struct>
  void putStruct(uint16_t type, const Struct& s) {
    put(type, &s, sizeof s);
  }

  // A raw struct inside a nest (the veth peer's ifinfomsg precedes its attributes), NLMSG-aligned.
  template <class Struct>
  void appendStruct(const Struct& s) {
    size_t off = buf_.size();
    appendZeroed(NLMSG_ALIGN(sizeof s));
    std::memcpy(buf_.data() + off, &s, sizeof s);
  }

  // A struct whose fields are completed once what follows it is appended (an rtnexthop's length): its offset,
  // for structAt.
  template <class Struct>
  size_t beginStruct(const Struct& s) {
    size_t off = buf_.size();
    appendStruct(s);
    return off;
  }
  template <class Struct>
  Struct& structAt(size_t off) {
    return *reinterpret_cast<Struct*>(buf_.data() + off);
  }

  // Nested attributes: beginNest returns a handle that endNest closes (fixing up its length).
  // NLA_F_NESTED marks a pure nest; a payload that starts with a struct (the veth peer) is not one.
  size_t beginNest(uint16_t type, bool pureNest = true);
  void endNest(size_t handle);

  void setSeq(uint32_t seq) { header().nlmsg_seq = seq; }
  uint32_t seq() const { return header().nlmsg_seq; }
  bool isDump() const { return (header().nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP; }
  uint16_t type() const { return header().nlmsg_type; }

  const uint8_t* data() const { return buf_.data(); }
  size_t size() const { return buf_.size(); }

 private:
  NlRequest(uint16_t type, uint16_t extraFlags);
  void appendZeroed(size_t len);
  nlmsghdr& header() { return *reinterpret_cast<nlmsghdr*>(buf_.data()); }
  const nlmsghdr& header() const { return *reinterpret_cast<const nlmsghdr*>(buf_.data()); }

  std::vector<uint8_t> buf_;
};

// Attribute type without the NLA_F_NESTED / NLA_F_NET_BYTEORDER flag bits.
inline uint16_t attrType(const rtattr* a) { return a->rta_type & NLA_TYPE_MASK; }
inline const void* attrData(const rtattr* a) { return RTA_DATA(a); }
inline size_t attrLen(const rtattr* a) { return RTA_PAYLOAD(a); }

// Calls fn(const rtattr*) for every well-formed attribute in [data, data+len): each must lie wholly inside
// what is left of the buffer, and the walk ends at the first that does not. (Written out rather than with
// RTA_OK/RTA_NEXT, whose remaining-length arithmetic wraps when it is unsigned.)
template <class Fn>
void forEachAttr(const void* data, size_t len, Fn&& fn) {
  if (!data) return;
  const auto* p = static_cast<const uint8_t*>(data);
  size_t rest = len;
  while (rest >= RTA_LENGTH(0)) {
    auto* a = reinterpret_cast<const rtattr*>(p);
    if (a->rta_len < RTA_LENGTH(0) || a->rta_len > rest) break;
    fn(a);
    size_t step = RTA_ALIGN(a->rta_len);
    if (step >= rest) break;
    p += step;
    rest -= step;
  }
}

// Every attribute after a family header inside a message (what AttrTable::afterHeader indexes).
template <class Fn>
void forEachAttrAfterHeader(const nlmsghdr* h, size_t familyHeaderLen, Fn&& fn) {
  size_t off = NLMSG_ALIGN(familyHeaderLen);
  size_t payload = h->nlmsg_len >= NLMSG_HDRLEN ? h->nlmsg_len - NLMSG_HDRLEN : 0;
  if (payload < off) return;
  forEachAttr(static_cast<const uint8_t*>(NLMSG_DATA(h)) + off, payload - off, fn);
}

template <class Fn>
void forEachNested(const rtattr* nest, Fn&& fn) {
  forEachAttr(RTA_DATA(nest), RTA_PAYLOAD(nest), fn);
}

// Attributes indexed by type (last one wins), like the kernel's nla_parse; types above Max are ignored.
template <size_t Max>
class AttrTable {
 public:
  AttrTable(const void* data, size_t len) {
    slots_.fill(nullptr);
    forEachAttr(data, len, [this](const rtattr* a) {
      uint16_t t = attrType(a);
      if (t <= Max) slots_[t] = a;
    });
  }
  // The attributes after a family header inside a message.
  static AttrTable afterHeader(const nlmsghdr* h, size_t familyHeaderLen) {
    size_t off = NLMSG_ALIGN(familyHeaderLen);
    size_t payload = h->nlmsg_len >= NLMSG_HDRLEN ? h->nlmsg_len - NLMSG_HDRLEN : 0;
    if (payload < off) return AttrTable(nullptr, 0);
    return AttrTable(static_cast<const uint8_t*>(NLMSG_DATA(h)) + off, payload - off);
  }
  static AttrTable nested(const rtattr* nest) { return AttrTable(RTA_DATA(nest), RTA_PAYLOAD(nest)); }

  const rtattr* operator[](uint16_t type) const { return type <= Max ? slots_[type] : nullptr; }
  void set(uint16_t type, const rtattr* a) {
    if (type <= Max) slots_[type] = a;
  }

 private:
  std::array<const rtattr*, Max + 1> slots_;
};

// Typed reads that tolerate short or missing attributes (the kernel is trusted, but a captured buffer in a
// unit test, or a driver, may be odd): they return false instead of reading past the payload.
template <class T>
bool readAttr(const rtattr* a, T& out) {
  if (!a || attrLen(a) < sizeof(T)) return false;
  std::memcpy(&out, attrData(a), sizeof(T));
  return true;
}
bool readString(const rtattr* a, std::string& out);
std::vector<uint8_t> readBytes(const rtattr* a);

// The same, nullopt for a missing or short attribute.
template <class T>
std::optional<T> optionalValue(const rtattr* a) {
  T v{};
  if (!readAttr(a, v)) return std::nullopt;
  return v;
}
inline std::optional<std::string> optionalString(const rtattr* a) {
  std::string s;
  if (!readString(a, s)) return std::nullopt;
  return s;
}

// The family header of a received message, or nullptr when the message is too short to hold one.
template <class FamilyHeader>
const FamilyHeader* familyHeader(const nlmsghdr* h) {
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(FamilyHeader))) return nullptr;
  return static_cast<const FamilyHeader*>(NLMSG_DATA(h));
}

// Calls fn(const nlmsghdr*) for every complete message in a buffer of concatenated messages, each wholly
// inside the buffer (the same walk as forEachAttr, with NLMSG sizes).
template <class Fn>
void forEachMessage(const void* data, size_t len, Fn&& fn) {
  if (!data) return;
  const auto* p = static_cast<const uint8_t*>(data);
  size_t rest = len;
  while (rest >= NLMSG_HDRLEN) {
    auto* h = reinterpret_cast<const nlmsghdr*>(p);
    if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > rest) break;
    fn(h);
    size_t step = NLMSG_ALIGN(h->nlmsg_len);
    if (step >= rest) break;
    p += step;
    rest -= step;
  }
}

}  // namespace sriovctl
