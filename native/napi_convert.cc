#include "napi_convert.h"

#include <net/if.h>
#include <sys/socket.h>

#include "napi_args.h"

namespace sriovctl {

namespace {

template <class T>
Napi::Value orNull(Napi::Env env, const std::optional<T>& v) {
  if (!v) return env.Null();
  if constexpr (std::is_same_v<T, std::string>)
    return Napi::String::New(env, *v);
  else
    return Napi::Number::New(env, static_cast<double>(*v));
}

Napi::Value flagOrNull(Napi::Env env, int v) { return v < 0 ? env.Null() : Napi::Boolean::New(env, v != 0); }

const char* linkStateName(uint32_t s) {
  switch (s) {
    case IFLA_VF_LINK_STATE_ENABLE: return "enable";
    case IFLA_VF_LINK_STATE_DISABLE: return "disable";
    default: return "auto";
  }
}

int jsFamily(int af) { return af == AF_INET ? 4 : 6; }

}  // namespace

int familyFromJs(Napi::Env env, int32_t family) {
  switch (family) {
    case 0: return AF_UNSPEC;
    case 4: return AF_INET;
    case 6: return AF_INET6;
    default: throw Napi::TypeError::New(env, "family: expected 4 or 6");
  }
}

Napi::Object vfToJs(Napi::Env env, const VfInfo& v) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("vf", v.vf);
  o.Set("mac", formatHwAddr(v.mac.data(), v.mac.size()));
  o.Set("vlan", v.vlan);
  o.Set("qos", v.qos);
  o.Set("vlanProto", v.vlanProto == 0x88a8 ? "802.1ad" : "802.1Q");
  o.Set("spoofchk", flagOrNull(env, v.spoofchk));
  o.Set("trust", flagOrNull(env, v.trust));
  o.Set("linkState", linkStateName(v.linkState));
  o.Set("minTxRate", v.minTxRate);
  o.Set("maxTxRate", v.maxTxRate);
  return o;
}

Napi::Object linkToJs(Napi::Env env, const LinkInfo& l) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("index", l.index);
  o.Set("name", l.name);
  o.Set("mac", orNull(env, l.mac));
  o.Set("permMac", orNull(env, l.permMac));
  o.Set("mtu", l.mtu);
  o.Set("group", l.group);
  o.Set("flags", l.flags);
  o.Set("up", Napi::Boolean::New(env, (l.flags & IFF_UP) != 0));
  o.Set("operstate", operstateName(l.operstate));
  o.Set("kind", orNull(env, l.kind));
  o.Set("alias", orNull(env, l.alias));
  Napi::Array alt = Napi::Array::New(env, l.altnames.size());
  for (uint32_t i = 0; i < l.altnames.size(); ++i) alt.Set(i, l.altnames[i]);
  o.Set("altnames", alt);
  o.Set("parentIndex", orNull(env, l.parentIndex));
  o.Set("masterIndex", orNull(env, l.masterIndex));
  if (l.linkNetnsId) o.Set("linkNetnsId", *l.linkNetnsId);
  if (l.numVfs) o.Set("numVfs", *l.numVfs);
  if (l.vfs) {
    Napi::Array vfs = Napi::Array::New(env, l.vfs->size());
    for (uint32_t i = 0; i < l.vfs->size(); ++i) vfs.Set(i, vfToJs(env, (*l.vfs)[i]));
    o.Set("vfs", vfs);
  }
  return o;
}

namespace {

/** A JS array of `items`, each converted by `one`. */
template <typename T, typename Convert>
Napi::Array arrayToJs(Napi::Env env, const std::vector<T>& items, Convert one) {
  Napi::Array a = Napi::Array::New(env, items.size());
  for (uint32_t i = 0; i < items.size(); ++i) a.Set(i, one(items[i]));
  return a;
}

}  // namespace

Napi::Array linksToJs(Napi::Env env, const std::vector<LinkInfo>& links) {
  return arrayToJs(env, links, [&](const LinkInfo& l) { return linkToJs(env, l); });
}

Napi::Array addressesToJs(Napi::Env env, const std::vector<AddressInfo>& addrs) {
  return arrayToJs(env, addrs, [&](const AddressInfo& x) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("index", x.index);
    o.Set("family", jsFamily(x.family));
    o.Set("address", x.address);
    o.Set("prefixLen", x.prefixLen);
    o.Set("cidr", x.address + "/" + std::to_string(x.prefixLen));
    o.Set("flags", x.flags);
    return o;
  });
}

Napi::Object routeToJs(Napi::Env env, const RouteInfo& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("family", jsFamily(r.family));
  o.Set("dst", r.dstLen == 0 ? std::string("default")
                             : r.dst.value_or("") + "/" + std::to_string(r.dstLen));
  o.Set("gateway", orNull(env, r.gateway));
  o.Set("index", orNull(env, r.oif));
  o.Set("nexthopIndexes", arrayToJs(env, r.nexthopOifs, [&](int i) { return Napi::Number::New(env, i); }));
  o.Set("table", r.table);
  o.Set("metric", orNull(env, r.metric));
  o.Set("scope", r.scope);
  o.Set("protocol", r.protocol);
  o.Set("type", r.type);
  return o;
}

Napi::Array routesToJs(Napi::Env env, const std::vector<RouteInfo>& routes) {
  return arrayToJs(env, routes, [&](const RouteInfo& r) { return routeToJs(env, r); });
}

Napi::Value driverInfoToJs(Napi::Env env, const std::optional<DriverInfo>& d) {
  if (!d) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("driver", d->driver);
  o.Set("busInfo", d->busInfo);
  return o;
}

LinkChange linkChangeFromJs(const Napi::Object& o) {
  LinkChange c;
  c.name = optString(o, "name");
  c.mtu = optU32(o, "mtu");
  c.mac = optMac(o, "mac");
  c.up = optBool(o, "up");
  c.alias = optString(o, "alias");
  c.master = optU32(o, "master");
  return c;
}

NewLink newLinkFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  NewLink n;
  n.kind = required(env, optString(o, "kind"), "kind");
  n.name = required(env, optString(o, "name"), "name");
  n.mac = optMac(o, "mac");
  n.mtu = optU32(o, "mtu");
  n.group = optU32(o, "group");
  n.peerName = optString(o, "peerName").value_or("");
  n.peerNsFd = optInt(o, "peerNsFd").value_or(-1);
  n.peerMac = optMac(o, "peerMac");
  n.parentIndex = optInt(o, "parentIndex").value_or(0);
  n.macvlanMode = optU32(o, "macvlanMode");
  return n;
}

VfChange vfChangeFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  using K = VfChange::Kind;
  VfChange c;
  const std::string kind = required(env, optString(o, "kind"), "kind");
  if (kind == "mac") {
    c.kind = K::Mac;
    c.mac = required(env, optMac(o, "mac"), "mac");
  } else if (kind == "vlan") {
    c.kind = K::Vlan;
    c.vlan = required(env, optU32(o, "vlan"), "vlan");
    c.qos = required(env, optU32(o, "qos"), "qos");
    c.vlanProto = static_cast<uint16_t>(required(env, optU32(o, "proto"), "proto"));
  } else if (kind == "spoofchk" || kind == "trust") {
    c.kind = kind == "trust" ? K::Trust : K::Spoofchk;
    c.enabled = required(env, optBool(o, "enabled"), "enabled");
  } else if (kind == "linkState") {
    c.kind = K::LinkState;
    c.linkState = required(env, optU32(o, "linkState"), "linkState");
  } else if (kind == "rate") {
    c.kind = K::Rate;
    c.minTxRate = required(env, optU32(o, "minTxRate"), "minTxRate");
    c.maxTxRate = required(env, optU32(o, "maxTxRate"), "maxTxRate");
  } else {
    throw Napi::TypeError::New(env, "unknown VF change kind '" + kind + "'");
  }
  return c;
}

RouteSpec routeSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  RouteSpec r;
  r.family = familyFromJs(env, required(env, optInt(o, "family"), "family"));
  if (auto dst = optString(o, "dst")) r.dst = parseInet(r.family, *dst, "route dst");
  r.dstLen = static_cast<uint8_t>(optU32(o, "dstLen").value_or(0));
  if (auto gw = optString(o, "gateway")) r.gateway = parseInet(r.family, *gw, "route gateway");
  r.oif = optInt(o, "index").value_or(0);
  r.metric = optU32(o, "metric");
  r.table = optU32(o, "table").value_or(254);
  if (auto scope = optU32(o, "scope")) r.scope = static_cast<uint8_t>(*scope);
  return r;
}

}  // namespace sriovctl
