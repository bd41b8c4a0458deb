#include "napi_rtnl.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>

#include "addr.h"
#include "connection.h"
#include "ethtool.h"
#include "garp.h"
#include "link.h"
#include "napi_args.h"
#include "napi_convert.h"
#include "napi_convert_rule_nexthop.h"
#include "napi_neigh.h"
#include "napi_ops.h"
#include "napi_promise_worker.h"
#include "route.h"
#include "vf.h"

namespace sriovctl {

namespace {

using ConnPtr = std::shared_ptr<Connection>;

// One socket operation (one or more requests) on the connection it was parsed for, on whichever thread runs it.
template <class Derived, class R>
struct ConnOp {
  using Result = R;
  ConnPtr conn;
  Result run() {
    auto one = conn->exclusive();
    return static_cast<Derived*>(this)->exec(*conn);
  }
};

template <class Derived>
struct VoidOp : ConnOp<Derived, Done> {
  static Napi::Value toJs(Napi::Env env, const Done& d) { return undefinedResult(env, d); }
};

struct GetLinkOp : ConnOp<GetLinkOp, LinkInfo> {
  int index = 0;
  std::string name;
  bool vfs = false;
  static GetLinkOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    GetLinkOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.name = argString(info, 1, "name");
    op.vfs = argBool(info, 2, "vfs");
    return op;
  }
  LinkInfo exec(Connection& c) { return getLink(c.netlink(), index, name, vfs); }
  static Napi::Value toJs(Napi::Env env, const LinkInfo& l) { return linkToJs(env, l); }
};

struct ListLinksOp : ConnOp<ListLinksOp, std::vector<LinkInfo>> {
  static ListLinksOp parse(const Napi::CallbackInfo&, ConnPtr c) { return ListLinksOp{{std::move(c)}}; }
  std::vector<LinkInfo> exec(Connection& c) { return listLinks(c.netlink()); }
  static Napi::Value toJs(Napi::Env env, const std::vector<LinkInfo>& l) { return linksToJs(env, l); }
};

struct SetLinkOp : VoidOp<SetLinkOp> {
  int index = 0;
  LinkChange change;
  static SetLinkOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    SetLinkOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.change = linkChangeFromJs(argObject(info, 1, "change"));
    return op;
  }
  Done exec(Connection& c) {
    setLink(c.netlink(), index, change);
    return {};
  }
};

// The target namespace's fd, duplicated: the move may run on a pool thread after the caller closed its own.
struct OwnFd {
  int fd;
  explicit OwnFd(int from) : fd(fcntl(from, F_DUPFD_CLOEXEC, 0)) {
    if (fd < 0) throwErrno("dup(netns fd)");
  }
  ~OwnFd() { ::close(fd); }
  OwnFd(const OwnFd&) = delete;
  OwnFd& operator=(const OwnFd&) = delete;
};

struct MoveLinkOp : VoidOp<MoveLinkOp> {
  int index = 0;
  std::shared_ptr<OwnFd> ns;
  std::optional<std::string> name;
  static MoveLinkOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    MoveLinkOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.ns = std::make_shared<OwnFd>(argInt(info, 1, "nsFd"));
    if (info[2].IsString()) op.name = argString(info, 2, "name");
    return op;
  }
  Done exec(Connection& c) {
    moveLink(c.netlink(), index, ns->fd, name);
    return {};
  }
};

template <bool Add>
struct AltnameOp : VoidOp<AltnameOp<Add>> {
  int index = 0;
  std::string altname;
  static AltnameOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    AltnameOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.altname = argString(info, 1, "altname");
    return op;
  }
  Done exec(Connection& c) {
    if (Add)
      addAltname(c.netlink(), index, altname);
    else
      delAltname(c.netlink(), index, altname);
    return {};
  }
};

// One object argument, converted by FromJs and handed to Apply.
template <class Spec, Spec (*FromJs)(const Napi::Object&), void (*Apply)(NlSocket&, const Spec&)>
struct SpecOp : VoidOp<SpecOp<Spec, FromJs, Apply>> {
  Spec spec;
  static SpecOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    SpecOp op;
    op.conn = std::move(c);
    op.spec = FromJs(argObject(info, 0, "spec"));
    return op;
  }
  Done exec(Connection& c) {
    Apply(c.netlink(), spec);
    return {};
  }
};

// One integer argument, read by Read (its error naming it Name), handed to Apply.
template <class T, T (*Read)(const Napi::CallbackInfo&, size_t, const char*), const char* Name, void (*Apply)(NlSocket&, T)>
struct ScalarOp : VoidOp<ScalarOp<T, Read, Name, Apply>> {
  T value{};
  static ScalarOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ScalarOp op;
    op.conn = std::move(c);
    op.value = Read(info, 0, Name);
    return op;
  }
  Done exec(Connection& c) {
    Apply(c.netlink(), value);
    return {};
  }
};

constexpr char kIndex[] = "index";
constexpr char kGroup[] = "group";
constexpr char kId[] = "id";
using DeleteLinkOp = ScalarOp<int32_t, argInt, kIndex, deleteLink>;
using DeleteLinkGroupOp = ScalarOp<uint32_t, argU32, kGroup, deleteLinkGroup>;
using DeleteNexthopOp = ScalarOp<uint32_t, argU32, kId, deleteNexthop>;

// An object argument and whether it replaces what is there (NLM_F_REPLACE), handed to Apply.
template <class Spec, Spec (*FromJs)(const Napi::Object&), void (*Apply)(NlSocket&, const Spec&, bool)>
struct PutOp : VoidOp<PutOp<Spec, FromJs, Apply>> {
  Spec spec;
  bool replace = false;
  static PutOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    PutOp op;
    op.conn = std::move(c);
    op.spec = FromJs(argObject(info, 0, "spec"));
    op.replace = argBool(info, 1, "replace");
    return op;
  }
  Done exec(Connection& c) {
    Apply(c.netlink(), spec, replace);
    return {};
  }
};

void putRoute(NlSocket& s, const RouteSpec& r, bool replace) {
  if (replace)
    replaceRoute(s, r);
  else
    addRoute(s, r);
}

using AddLinkOp = SpecOp<NewLink, newLinkFromJs, addLink>;
using PutAddressOp = SpecOp<AddressSpec, addressSpecFromJs, putAddress>;

struct SetVfOp : VoidOp<SetVfOp> {
  int pfIndex = 0;
  uint32_t vf = 0;
  VfChange change;
  static SetVfOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    SetVfOp op;
    op.conn = std::move(c);
    op.pfIndex = argInt(info, 0, "pfIndex");
    op.vf = argU32(info, 1, "vf");
    op.change = vfChangeFromJs(argObject(info, 2, "change"));
    return op;
  }
  Done exec(Connection& c) {
    auto req = encodeVfChange(pfIndex, vf, change);
    c.netlink().request(req, vfChangeOp(change));
    return {};
  }
};

// Details: every field a give-back puts back (addressDetailsToJs), else the plain Address.
template <bool Details>
struct ListAddressesOp : ConnOp<ListAddressesOp<Details>, std::vector<AddressInfo>> {
  int index = 0;
  int family = 0;
  static ListAddressesOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ListAddressesOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.family = familyFromJs(info.Env(), argInt(info, 1, "family"));
    return op;
  }
  std::vector<AddressInfo> exec(Connection& c) { return listAddresses(c.netlink(), index, family); }
  static Napi::Value toJs(Napi::Env env, const std::vector<AddressInfo>& a) {
    return Details ? addressDetailsToJs(env, a) : addressesToJs(env, a);
  }
};

template <bool Add>
struct AddressOp : VoidOp<AddressOp<Add>> {
  int index = 0;
  InetAddr addr;
  uint8_t prefixLen = 0;
  static AddressOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    AddressOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    int family = familyFromJs(info.Env(), argInt(info, 1, "family"));
    op.addr = parseInet(family, argString(info, 2, "address"), Add ? "RTM_NEWADDR" : "RTM_DELADDR");
    op.prefixLen = static_cast<uint8_t>(argU32(info, 3, "prefixLen"));
    return op;
  }
  Done exec(Connection& c) {
    if (Add)
      addAddress(c.netlink(), index, addr, prefixLen);
    else
      deleteAddress(c.netlink(), index, addr, prefixLen);
    return {};
  }
};

// Details: every field a give-back puts back (routeDetailsToJs), filtered by output device (0: any).
template <bool Details>
struct ListRoutesOp : ConnOp<ListRoutesOp<Details>, std::vector<RouteInfo>> {
  int family = 0;
  uint32_t table = 0;
  int oif = 0;
  static ListRoutesOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ListRoutesOp op;
    op.conn = std::move(c);
    op.family = familyFromJs(info.Env(), argInt(info, 0, "family"));
    op.table = argU32(info, 1, "table");
    if (Details) op.oif = argInt(info, 2, "index");
    return op;
  }
  std::vector<RouteInfo> exec(Connection& c) { return listRoutes(c.netlink(), family, table, oif); }
  static Napi::Value toJs(Napi::Env env, const std::vector<RouteInfo>& r) {
    return Details ? routeDetailsToJs(env, r) : routesToJs(env, r);
  }
};

template <bool Add>
struct RouteOp : VoidOp<RouteOp<Add>> {
  RouteSpec spec;
  static RouteOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    RouteOp op;
    op.conn = std::move(c);
    op.spec = routeSpecFromJs(argObject(info, 0, "route"));
    return op;
  }
  Done exec(Connection& c) {
    if (Add)
      addRoute(c.netlink(), spec);
    else
      deleteRoute(c.netlink(), spec);
    return {};
  }
};

struct LookupRouteOp : ConnOp<LookupRouteOp, RouteInfo> {
  InetAddr dst;
  uint8_t ipProto = 0;
  uint16_t dport = 0;
  static LookupRouteOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    LookupRouteOp op;
    op.conn = std::move(c);
    int family = familyFromJs(info.Env(), argInt(info, 0, "family"));
    op.dst = parseInet(family, argString(info, 1, "address"), "RTM_GETROUTE");
    op.ipProto = static_cast<uint8_t>(argU32(info, 2, "ipProto"));
    op.dport = static_cast<uint16_t>(argU32(info, 3, "dport"));
    return op;
  }
  RouteInfo exec(Connection& c) { return lookupRoute(c.netlink(), dst, ipProto, dport); }
  static Napi::Value toJs(Napi::Env env, const RouteInfo& r) { return routeToJs(env, r); }
};

struct ListRulesOp : ConnOp<ListRulesOp, std::vector<RuleInfo>> {
  int family = 0;
  static ListRulesOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ListRulesOp op;
    op.conn = std::move(c);
    op.family = familyFromJs(info.Env(), argInt(info, 0, "family"));
    return op;
  }
  std::vector<RuleInfo> exec(Connection& c) { return listRules(c.netlink(), family); }
  static Napi::Value toJs(Napi::Env env, const std::vector<RuleInfo>& r) { return rulesToJs(env, r); }
};

using PutRouteOp = PutOp<RouteSpec, routeSpecFromJs, putRoute>;
using AddNexthopOp = PutOp<NexthopSpec, nexthopSpecFromJs, addNexthop>;
using AddRuleOp = SpecOp<RuleSpec, ruleSpecFromJs, addRule>;
using DeleteRuleOp = SpecOp<RuleSpec, ruleSpecFromJs, deleteRule>;

struct ListNexthopsOp : ConnOp<ListNexthopsOp, std::vector<NexthopInfo>> {
  static ListNexthopsOp parse(const Napi::CallbackInfo&, ConnPtr c) { return ListNexthopsOp{{std::move(c)}}; }
  std::vector<NexthopInfo> exec(Connection& c) { return listNexthops(c.netlink()); }
  static Napi::Value toJs(Napi::Env env, const std::vector<NexthopInfo>& n) { return nexthopsToJs(env, n); }
};

struct DriverInfoOp : ConnOp<DriverInfoOp, std::optional<DriverInfo>> {
  std::string name;
  static DriverInfoOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    DriverInfoOp op;
    op.conn = std::move(c);
    op.name = argString(info, 0, "name");
    return op;
  }
  std::optional<DriverInfo> exec(Connection& c) { return driverInfo(c, name); }
  static Napi::Value toJs(Napi::Env env, const std::optional<DriverInfo>& d) { return driverInfoToJs(env, d); }
};

struct GratuitousArpOp : VoidOp<GratuitousArpOp> {
  int index = 0;
  std::string ipv4;
  static GratuitousArpOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    GratuitousArpOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.ipv4 = argString(info, 1, "ipv4");
    return op;
  }
  Done exec(Connection& c) {
    LinkInfo link = getLink(c.netlink(), index, "", false);
    Mac mac{};
    if (!link.mac || !parseMac(*link.mac, mac))
      throw SysFailure::withDetail(EINVAL, "gratuitous ARP " + ipv4, "link has no Ethernet address");
    sendGratuitousArp(c, index, mac, ipv4);
    return {};
  }
};

struct ListNeighboursOp : ConnOp<ListNeighboursOp, std::vector<NeighbourInfo>> {
  int index = 0;
  int family = 0;
  static ListNeighboursOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ListNeighboursOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.family = familyFromJs(info.Env(), argInt(info, 1, "family"));
    return op;
  }
  std::vector<NeighbourInfo> exec(Connection& c) { return listNeighbours(c.netlink(), index, family); }
  static Napi::Value toJs(Napi::Env env, const std::vector<NeighbourInfo>& n) { return neighboursToJs(env, n); }
};

struct ReplaceNeighbourOp : VoidOp<ReplaceNeighbourOp> {
  NeighbourSpec spec;
  static ReplaceNeighbourOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ReplaceNeighbourOp op;
    op.conn = std::move(c);
    op.spec = neighbourSpecFromJs(argObject(info, 0, "neighbour"));
    return op;
  }
  Done exec(Connection& c) {
    replaceNeighbour(c.netlink(), spec);
    return {};
  }
};

struct ListQdiscsOp : ConnOp<ListQdiscsOp, std::vector<QdiscInfo>> {
  int index = 0;
  static ListQdiscsOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ListQdiscsOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    return op;
  }
  std::vector<QdiscInfo> exec(Connection& c) { return listQdiscs(c.netlink(), index); }
  static Napi::Value toJs(Napi::Env env, const std::vector<QdiscInfo>& q) { return qdiscsToJs(env, q); }
};

struct ReplaceRootQdiscOp : VoidOp<ReplaceRootQdiscOp> {
  int index = 0;
  uint32_t handle = 0;
  std::string kind;
  std::string options;
  static ReplaceRootQdiscOp parse(const Napi::CallbackInfo& info, ConnPtr c) {
    ReplaceRootQdiscOp op;
    op.conn = std::move(c);
    op.index = argInt(info, 0, "index");
    op.handle = argU32(info, 1, "handle");
    op.kind = argString(info, 2, "kind");
    op.options = argString(info, 3, "options");
    return op;
  }
  Done exec(Connection& c) {
    replaceRootQdisc(c.netlink(), index, handle, kind, options);
    return {};
  }
};

class RtnlSocketWrap : public Napi::ObjectWrap<RtnlSocketWrap> {
 public:
  // new RtnlSocket(nsFd /* -1: the caller's namespace */, timeoutMs)
  explicit RtnlSocketWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RtnlSocketWrap>(info) {
    int nsFd = argInt(info, 0, "nsFd");
    int timeoutMs = argInt(info, 1, "timeoutMs");
    try {
      conn_ = Connection::open(nsFd, timeoutMs);
    } catch (const SysFailure& f) {
      throw asJsError(info.Env(), f);
    }
  }

  template <class Op>
  Napi::Value sync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&] {
      Op op = Op::parse(info, conn_);
      return runSync(env, op);
    });
  }

  // The same operation on a libuv pool thread: a promise of its result. The connection's lock keeps it from
  // interleaving with calls the JS thread makes meanwhile (one under way waits for the other).
  template <class Op>
  Napi::Value start(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      return PromiseWorker<typename Op::Result, &Op::toJs>::start(env, "sriovctl.rtnl",
                                                                  [op = Op::parse(info, conn_)]() mutable { return op.run(); });
    });
  }

  // { portId, nextSeq }: how the kernel addresses our replies (tests forge replies with it).
  Napi::Value addressing(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto one = conn_->exclusive();
    Napi::Object o = Napi::Object::New(env);
    o.Set("portId", Napi::Number::New(env, conn_->netlink().portId()));
    o.Set("nextSeq", Napi::Number::New(env, conn_->netlink().nextSeq()));
    return o;
  }

  Napi::Value close(const Napi::CallbackInfo& info) {
    conn_->close();
    return info.Env().Undefined();
  }

  // The socket's namespace's cookie as a decimal string (a u64: beyond a JS number), or null (kernel < 5.14).
  Napi::Value netnsCookie(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    try {
      auto one = conn_->exclusive();
      std::optional<uint64_t> cookie = conn_->netlink().netnsCookie();
      return cookie ? Napi::String::New(env, std::to_string(*cookie)) : env.Null();
    } catch (const SysFailure& f) {
      throw asJsError(env, f);
    }
  }

 private:
  ConnPtr conn_;
};

// Names must outlive DefineClass (the descriptors keep the pointers): string literals only. Every operation has a
// synchronous form and a start* form run on a libuv pool thread: each request waits for RTNL, which another
// namespace move holds for 10-30 ms, and the daemon's thread must not wait with it.
#define SRIOVCTL_OP(Op, name, startName)                                                       \
  props.push_back(RtnlSocketWrap::InstanceMethod(name, &RtnlSocketWrap::sync<Op>)); \
  props.push_back(RtnlSocketWrap::InstanceMethod(startName, &RtnlSocketWrap::start<Op>))

}  // namespace

Napi::Function defineRtnlSocket(Napi::Env env) {
  std::vector<Napi::ClassPropertyDescriptor<RtnlSocketWrap>> props;
  props.push_back(RtnlSocketWrap::InstanceMethod("close", &RtnlSocketWrap::close));
  props.push_back(RtnlSocketWrap::InstanceMethod("addressing", &RtnlSocketWrap::addressing));
  props.push_back(RtnlSocketWrap::InstanceMethod("netnsCookie", &RtnlSocketWrap::netnsCookie));
  SRIOVCTL_OP(GetLinkOp, "getLink", "startGetLink");
  SRIOVCTL_OP(ListLinksOp, "listLinks", "startListLinks");
  SRIOVCTL_OP(SetLinkOp, "setLink", "startSetLink");
  SRIOVCTL_OP(MoveLinkOp, "moveLink", "startMoveLink");
  SRIOVCTL_OP(AltnameOp<true>, "addAltname", "startAddAltname");
  SRIOVCTL_OP(AltnameOp<false>, "delAltname", "startDelAltname");
  // synchronous only: a veth's peer namespace fd is the caller's, which a call left running could outlive
  props.push_back(RtnlSocketWrap::InstanceMethod("addLink", &RtnlSocketWrap::sync<AddLinkOp>));
  SRIOVCTL_OP(DeleteLinkOp, "deleteLink", "startDeleteLink");
  SRIOVCTL_OP(DeleteLinkGroupOp, "deleteLinkGroup", "startDeleteLinkGroup");
  SRIOVCTL_OP(SetVfOp, "setVf", "startSetVf");
  SRIOVCTL_OP(ListAddressesOp<false>, "listAddresses", "startListAddresses");
  SRIOVCTL_OP(ListAddressesOp<true>, "listAddressDetails", "startListAddressDetails");
  SRIOVCTL_OP(PutAddressOp, "putAddress", "startPutAddress");
  SRIOVCTL_OP(AddressOp<true>, "addAddress", "startAddAddress");
  SRIOVCTL_OP(AddressOp<false>, "deleteAddress", "startDeleteAddress");
  SRIOVCTL_OP(ListRoutesOp<false>, "listRoutes", "startListRoutes");
  SRIOVCTL_OP(ListRoutesOp<true>, "listRouteDetails", "startListRouteDetails");
  SRIOVCTL_OP(PutRouteOp, "putRoute", "startPutRoute");
  SRIOVCTL_OP(RouteOp<true>, "addRoute", "startAddRoute");
  SRIOVCTL_OP(RouteOp<false>, "deleteRoute", "startDeleteRoute");
  SRIOVCTL_OP(LookupRouteOp, "lookupRoute", "startLookupRoute");
  SRIOVCTL_OP(ListRulesOp, "listRules", "startListRules");
  SRIOVCTL_OP(AddRuleOp, "addRule", "startAddRule");
  SRIOVCTL_OP(DeleteRuleOp, "deleteRule", "startDeleteRule");
  SRIOVCTL_OP(ListNexthopsOp, "listNexthops", "startListNexthops");
  SRIOVCTL_OP(AddNexthopOp, "addNexthop", "startAddNexthop");
  SRIOVCTL_OP(DeleteNexthopOp, "deleteNexthop", "startDeleteNexthop");
  SRIOVCTL_OP(DriverInfoOp, "driverInfo", "startDriverInfo");
  SRIOVCTL_OP(GratuitousArpOp, "sendGratuitousArp", "startSendGratuitousArp");
  SRIOVCTL_OP(ListNeighboursOp, "listNeighbours", "startListNeighbours");
  SRIOVCTL_OP(ReplaceNeighbourOp, "replaceNeighbour", "startReplaceNeighbour");
  SRIOVCTL_OP(ListQdiscsOp, "listQdiscs", "startListQdiscs");
  SRIOVCTL_OP(ReplaceRootQdiscOp, "replaceRootQdisc", "startReplaceRootQdisc");
  return RtnlSocketWrap::DefineClass(env, "RtnlSocket", props);
}

}  // namespace sriovctl
