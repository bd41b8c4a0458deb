#include "napi_convert_rule_nexthop.h"

#include <linux/fib_rules.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "napi_args.h"
#include "napi_convert.h"

namespace sriovctl {

namespace {

const char* ruleActionName(uint8_t action) {
  switch (action) {
    case FR_ACT_TO_TBL: return "table";
    case FR_ACT_GOTO: return "goto";
    case FR_ACT_NOP: return "nop";
    case FR_ACT_BLACKHOLE: return "blackhole";
    case FR_ACT_UNREACHABLE: return "unreachable";
    case FR_ACT_PROHIBIT: return "prohibit";
    default: return "unspec";
  }
}

int jsFamilyOrUnspec(int af) { return af == AF_INET ? 4 : af == AF_INET6 ? 6 : 0; }

Napi::Value rangeOrNull(Napi::Env env, const std::optional<RuleRange>& r) {
  if (!r) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("start", r->start);
  o.Set("end", r->end);
  return o;
}

Napi::Value cidrOrNull(Napi::Env env, const std::optional<std::string>& addr, uint8_t len) {
  if (!addr) return env.Null();
  return Napi::String::New(env, *addr + "/" + std::to_string(len));
}

Napi::Array attrTypesToJs(Napi::Env env, const std::vector<uint16_t>& types) {
  return arrayToJs(env, types, [&](uint16_t t) { return Napi::Number::New(env, t); });
}

// { start, end } or absent.
std::optional<RuleRange> optRange(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return std::nullopt;
  if (!v.IsObject()) throw Napi::TypeError::New(o.Env(), std::string(key) + ": expected {start, end}");
  Napi::Object r = v.As<Napi::Object>();
  return RuleRange{required(o.Env(), optU32(r, "start"), "start"), required(o.Env(), optU32(r, "end"), "end")};
}

std::string hexOf(const std::vector<uint8_t>& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

// Calls one(object) for each element of the array field `key` (absent: none); anything else is a TypeError naming it.
template <class Fn>
void forEachObjectIn(const Napi::Object& o, const char* key, const char* shape, Fn&& one) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return;
  const std::string expected = std::string(key) + ": expected an array of " + shape;
  if (!v.IsArray()) throw Napi::TypeError::New(o.Env(), expected);
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); ++i) {
    Napi::Value e = a.Get(i);
    if (!e.IsObject()) throw Napi::TypeError::New(o.Env(), expected);
    one(e.As<Napi::Object>());
  }
}

template <class Small>
std::optional<Small> optNarrow(const Napi::Object& o, const char* key) {
  auto v = optU32(o, key);
  if (!v) return std::nullopt;
  return static_cast<Small>(*v);
}

void matchesToJs(Napi::Env env, Napi::Object& o, const RuleMatches& m) {
  o.Set("iifName", orNull(env, m.iifName));
  o.Set("oifName", orNull(env, m.oifName));
  o.Set("tos", m.tos);
  o.Set("fwmark", orNull(env, m.fwmark));
  o.Set("fwmask", orNull(env, m.fwmask));
  o.Set("goto", orNull(env, m.gotoPriority));
  o.Set("flow", orNull(env, m.flow));
  o.Set("l3mdev", Napi::Boolean::New(env, m.l3mdev));
  o.Set("uidRange", rangeOrNull(env, m.uidRange));
  o.Set("ipProto", orNull(env, m.ipProto));
  o.Set("sport", rangeOrNull(env, m.sport));
  o.Set("dport", rangeOrNull(env, m.dport));
  o.Set("suppressPrefixLen", orNull(env, m.suppressPrefixLen));
  o.Set("suppressIfGroup", orNull(env, m.suppressIfGroup));
  o.Set("extraAttributes", arrayToJs(env, m.extraAttrs, [&](const RawAttr& a) {
          Napi::Object x = Napi::Object::New(env);
          x.Set("type", a.type);
          x.Set("data", hexOf(a.data));
          return x;
        }));
}

void matchesFromJs(const Napi::Object& o, RuleMatches& m) {
  Napi::Env env = o.Env();
  m.tos = static_cast<uint8_t>(optU32(o, "tos").value_or(0));
  m.iifName = optString(o, "iifName");
  m.oifName = optString(o, "oifName");
  m.fwmark = optU32(o, "fwmark");
  m.fwmask = optU32(o, "fwmask");
  m.gotoPriority = optU32(o, "goto");
  m.flow = optU32(o, "flow");
  m.l3mdev = optBool(o, "l3mdev").value_or(false);
  m.uidRange = optRange(o, "uidRange");
  m.ipProto = optNarrow<uint8_t>(o, "ipProto");
  m.sport = optRange(o, "sport");
  m.dport = optRange(o, "dport");
  m.suppressPrefixLen = optU32(o, "suppressPrefixLen");
  m.suppressIfGroup = optU32(o, "suppressIfGroup");
  forEachObjectIn(o, "extraAttributes", "{type, data}", [&](const Napi::Object& e) {
    Napi::Value data = e.Get("data");
    if (!data.IsBuffer()) throw Napi::TypeError::New(env, "extraAttributes: data: expected a Buffer");
    auto buf = data.As<Napi::Buffer<uint8_t>>();
    m.extraAttrs.push_back({static_cast<uint16_t>(required(env, optU32(e, "type"), "type")),
                            std::vector<uint8_t>(buf.Data(), buf.Data() + buf.Length())});
  });
}

}  // namespace

Napi::Array rulesToJs(Napi::Env env, const std::vector<RuleInfo>& rules) {
  return arrayToJs(env, rules, [&](const RuleInfo& r) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("family", jsFamilyOrUnspec(r.family));
    o.Set("priority", r.priority);
    o.Set("action", ruleActionName(r.action));
    o.Set("table", r.table);
    o.Set("src", cidrOrNull(env, r.src, r.srcLen));
    o.Set("dst", cidrOrNull(env, r.dst, r.dstLen));
    o.Set("invert", Napi::Boolean::New(env, (r.flags & FIB_RULE_INVERT) != 0));
    o.Set("iifDetached", Napi::Boolean::New(env, (r.flags & FIB_RULE_IIF_DETACHED) != 0));
    o.Set("oifDetached", Napi::Boolean::New(env, (r.flags & FIB_RULE_OIF_DETACHED) != 0));
    o.Set("flags", r.flags);
    o.Set("protocol", r.protocol);
    matchesToJs(env, o, r);
    return o;
  });
}

RuleSpec ruleSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  RuleSpec r;
  r.family = familyFromJs(env, required(env, optInt(o, "family"), "family"));
  r.priority = optU32(o, "priority");
  r.action = static_cast<uint8_t>(required(env, optU32(o, "action"), "action"));
  r.table = optU32(o, "table").value_or(0);
  if (optBool(o, "invert").value_or(false)) r.flags |= FIB_RULE_INVERT;
  r.protocol = optNarrow<uint8_t>(o, "protocol");
  if (auto src = optString(o, "src")) r.src = parseInet(r.family, *src, "rule src");
  r.srcLen = static_cast<uint8_t>(optU32(o, "srcLen").value_or(0));
  if (auto dst = optString(o, "dst")) r.dst = parseInet(r.family, *dst, "rule dst");
  r.dstLen = static_cast<uint8_t>(optU32(o, "dstLen").value_or(0));
  matchesFromJs(o, r);
  return r;
}

Napi::Array nexthopsToJs(Napi::Env env, const std::vector<NexthopInfo>& nexthops) {
  return arrayToJs(env, nexthops, [&](const NexthopInfo& n) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", n.id);
    o.Set("family", jsFamilyOrUnspec(n.family));
    o.Set("scope", n.scope);
    o.Set("protocol", n.protocol);
    o.Set("flags", n.flags);
    o.Set("onlink", Napi::Boolean::New(env, (n.flags & RTNH_F_ONLINK) != 0));
    o.Set("index", orNull(env, n.oif));
    o.Set("gateway", orNull(env, n.gateway));
    o.Set("blackhole", Napi::Boolean::New(env, n.blackhole));
    o.Set("fdb", Napi::Boolean::New(env, n.fdb));
    if (n.group.empty()) {
      o.Set("group", env.Null());
      o.Set("groupType", env.Null());
    } else {
      o.Set("group", arrayToJs(env, n.group, [&](const NexthopMember& m) {
              Napi::Object g = Napi::Object::New(env);
              g.Set("id", m.id);
              g.Set("weight", m.weight);
              return g;
            }));
      o.Set("groupType", n.groupType == NEXTHOP_GRP_TYPE_RES ? "resilient" : "mpath");
    }
    if (n.resilient) {
      Napi::Object r = Napi::Object::New(env);
      r.Set("buckets", n.resilient->buckets);
      r.Set("idleTimer", n.resilient->idleTimer);
      r.Set("unbalancedTimer", n.resilient->unbalancedTimer);
      o.Set("resilient", r);
    } else {
      o.Set("resilient", env.Null());
    }
    o.Set("unknownAttributes", attrTypesToJs(env, n.unknownAttrs));
    return o;
  });
}

NexthopSpec nexthopSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  NexthopSpec n;
  n.id = required(env, optU32(o, "id"), "id");
  n.family = familyFromJs(env, optInt(o, "family").value_or(0));
  n.protocol = static_cast<uint8_t>(optU32(o, "protocol").value_or(0));
  if (optBool(o, "onlink").value_or(false)) n.flags |= RTNH_F_ONLINK;
  n.oif = optU32(o, "index");
  if (auto gw = optString(o, "gateway")) n.gateway = parseInet(n.family, *gw, "nexthop gateway");
  n.blackhole = optBool(o, "blackhole").value_or(false);
  n.fdb = optBool(o, "fdb").value_or(false);
  forEachObjectIn(o, "group", "{id, weight}", [&](const Napi::Object& m) {
    n.group.push_back({required(env, optU32(m, "id"), "id"), required(env, optU32(m, "weight"), "weight")});
  });
  n.groupType = static_cast<uint16_t>(optU32(o, "groupType").value_or(NEXTHOP_GRP_TYPE_MPATH));
  Napi::Value res = o.Get("resilient");
  if (!res.IsUndefined()) {
    if (!res.IsObject()) throw Napi::TypeError::New(env, "resilient: expected an object");
    Napi::Object r = res.As<Napi::Object>();
    n.resilient = ResilientGroup{static_cast<uint16_t>(required(env, optU32(r, "buckets"), "buckets")),
                                 required(env, optU32(r, "idleTimer"), "idleTimer"),
                                 required(env, optU32(r, "unbalancedTimer"), "unbalancedTimer")};
  }
  return n;
}

}  // namespace sriovctl
