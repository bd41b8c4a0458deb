#include "napi_convert.h"

#include <net/if.h>
#include <sys/socket.h>

#include "napi_args.h"

namespace sriovctl {

namespace {

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

Napi::Array linksToJs(Napi::Env env, const std::vector<LinkInfo>& links) {
  return arrayToJs(env, links, [&](const LinkInfo& l) { return linkToJs(env, l); });
}

namespace {

Napi::Object addressToJs(Napi::Env env, const AddressInfo& x) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("index", x.index);
  o.Set("family", jsFamily(x.family));
  o.Set("address", x.address);
  o.Set("prefixLen", x.prefixLen);
  o.Set("cidr", x.address + "/" + std::to_string(x.prefixLen));
  o.Set("flags", x.flags);
  return o;
}

}  // namespace

Napi::Array addressesToJs(Napi::Env env, const std::vector<AddressInfo>& addrs) {
  return arrayToJs(env, addrs, [&](const AddressInfo& x) { return addressToJs(env, x); });
}

Napi::Array addressDetailsToJs(Napi::Env env, const std::vector<AddressInfo>& addrs) {
  return arrayToJs(env, addrs, [&](const AddressInfo& x) {
    Napi::Object o = addressToJs(env, x);
    o.Set("scope", x.scope);
    o.Set("peer", orNull(env, x.peer));
    o.Set("broadcast", orNull(env, x.broadcast));
    o.Set("label", orNull(env, x.label));
    o.Set("validLft", x.validLft);
    o.Set("preferredLft", x.preferredLft);
    o.Set("proto", orNull(env, x.proto));
    o.Set("metric", orNull(env, x.metric));
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

Napi::Array routeDetailsToJs(Napi::Env env, const std::vector<RouteInfo>& routes) {
  return arrayToJs(env, routes, [&](const RouteInfo& r) {
    Napi::Object o = routeToJs(env, r);
    o.Set("hops", arrayToJs(env, r.hops, [&](const RouteHop& h) {
      Napi::Object hop = Napi::Object::New(env);
      hop.Set("index", h.ifindex);
      hop.Set("gateway", orNull(env, h.gateway));
      hop.Set("weight", h.weight);
      hop.Set("flags", h.flags);
      return hop;
    }));
    o.Set("tos", r.tos);
    o.Set("flags", r.flags);
    o.Set("prefsrc", orNull(env, r.prefsrc));
    o.Set("src", r.src ? Napi::Value(Napi::String::New(env, *r.src + "/" + std::to_string(r.srcLen))) : env.Null());
    o.Set("pref", orNull(env, r.pref));
    o.Set("metrics", arrayToJs(env, r.metrics, [&](const RouteMetric& m) {
      Napi::Array pair = Napi::Array::New(env, 2);
      pair.Set(0u, m.first);
      pair.Set(1u, m.second);
      return pair;
    }));
    o.Set("ccAlgo", orNull(env, r.ccAlgo));
    o.Set("nhId", orNull(env, r.nhId));
    o.Set("expires", orNull(env, r.expires));
    o.Set("encap", Napi::Boolean::New(env, r.encap));
    return o;
  });
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

namespace {

std::optional<uint8_t> optU8(const Napi::Object& o, const char* key) {
  auto v = optU32(o, key);
  if (v && *v > 255) throw Napi::TypeError::New(o.Env(), std::string(key) + ": expected 0..255");
  return v ? std::optional<uint8_t>(static_cast<uint8_t>(*v)) : std::nullopt;
}

std::optional<InetAddr> optInet(const Napi::Object& o, const char* key, int family, const char* op) {
  auto text = optString(o, key);
  if (!text) return std::nullopt;
  return parseInet(family, *text, op);
}

Napi::Array optArray(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return Napi::Array::New(o.Env(), 0);
  if (!v.IsArray()) throw Napi::TypeError::New(o.Env(), std::string(key) + ": expected an array");
  return v.As<Napi::Array>();
}

Napi::Object objectAt(const Napi::Array& a, uint32_t i, const char* what) {
  Napi::Value v = a.Get(i);
  if (!v.IsObject()) throw Napi::TypeError::New(a.Env(), std::string(what) + ": expected objects");
  return v.As<Napi::Object>();
}

}  // namespace

RouteSpec routeSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  RouteSpec r;
  r.family = familyFromJs(env, required(env, optInt(o, "family"), "family"));
  r.dst = optInet(o, "dst", r.family, "route dst");
  r.dstLen = optU8(o, "dstLen").value_or(0);
  // a gateway of the other family is an RTA_VIA (the TS layer allows it only for a route put back as it was)
  r.gateway = optInet(o, "gateway", AF_UNSPEC, "route gateway");
  r.oif = optInt(o, "index").value_or(0);
  r.metric = optU32(o, "metric");
  r.table = optU32(o, "table").value_or(254);
  r.scope = optU8(o, "scope");
  r.protocol = optU8(o, "protocol");
  r.type = optU8(o, "type");
  r.tos = optU8(o, "tos").value_or(0);
  r.flags = optU32(o, "flags").value_or(0);
  r.prefsrc = optInet(o, "prefsrc", r.family, "route prefsrc");
  r.src = optInet(o, "src", r.family, "route src");
  r.srcLen = optU8(o, "srcLen").value_or(0);
  r.pref = optU8(o, "pref");
  Napi::Array metrics = optArray(o, "metrics");
  for (uint32_t i = 0; i < metrics.Length(); i++) {
    Napi::Value m = metrics.Get(i);
    if (!m.IsArray() || m.As<Napi::Array>().Length() != 2) throw Napi::TypeError::New(env, "metrics: expected [type, value] pairs");
    Napi::Array pair = m.As<Napi::Array>();
    r.metrics.emplace_back(static_cast<uint16_t>(pair.Get(0u).As<Napi::Number>().Uint32Value()),
                           pair.Get(1u).As<Napi::Number>().Uint32Value());
  }
  r.ccAlgo = optString(o, "ccAlgo");
  Napi::Array hops = optArray(o, "hops");
  for (uint32_t i = 0; i < hops.Length(); i++) {
    Napi::Object h = objectAt(hops, i, "hops");
    HopSpec hop;
    hop.ifindex = required(env, optInt(h, "index"), "index");
    hop.gateway = optInet(h, "gateway", AF_UNSPEC, "route nexthop gateway");
    hop.weight = optU8(h, "weight").value_or(1);
    hop.flags = optU8(h, "flags").value_or(0);
    r.hops.push_back(hop);
  }
  r.nhId = optU32(o, "nhId");
  return r;
}

AddressSpec addressSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  AddressSpec a;
  const int family = familyFromJs(env, required(env, optInt(o, "family"), "family"));
  a.index = required(env, optInt(o, "index"), "index");
  a.local = parseInet(family, required(env, optString(o, "address"), "address"), "RTM_NEWADDR");
  a.prefixLen = required(env, optU8(o, "prefixLen"), "prefixLen");
  a.peer = optInet(o, "peer", family, "RTM_NEWADDR peer");
  a.broadcast = optInet(o, "broadcast", family, "RTM_NEWADDR broadcast");
  a.label = optString(o, "label");
  a.flags = optU32(o, "flags").value_or(0);
  a.scope = optU8(o, "scope").value_or(0);
  a.validLft = optU32(o, "validLft").value_or(kForeverLifetime);
  a.preferredLft = optU32(o, "preferredLft").value_or(kForeverLifetime);
  a.metric = optU32(o, "metric");
  a.proto = optU8(o, "proto");
  return a;
}

}  // namespace sriovctl
