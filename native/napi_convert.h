// C++ results → plain JS objects shaped exactly like src/net/types.ts; JS change/spec objects → C++.
#pragma once

#include <napi.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "addr.h"
#include "ethtool.h"
#include "link.h"
#include "route.h"
#include "vf.h"

namespace sriovctl {

// A number or string, or null when absent.
template <class T>
Napi::Value orNull(Napi::Env env, const std::optional<T>& v) {
  if (!v) return env.Null();
  if constexpr (std::is_same_v<T, std::string>)
    return Napi::String::New(env, *v);
  else
    return Napi::Number::New(env, static_cast<double>(*v));
}

// A JS array of `items`, each converted by `one`.
template <typename T, typename Convert>
Napi::Array arrayToJs(Napi::Env env, const std::vector<T>& items, Convert one) {
  Napi::Array a = Napi::Array::New(env, items.size());
  for (uint32_t i = 0; i < items.size(); ++i) a.Set(i, one(items[i]));
  return a;
}

Napi::Object linkToJs(Napi::Env env, const LinkInfo& l);
Napi::Array linksToJs(Napi::Env env, const std::vector<LinkInfo>& links);
Napi::Object vfToJs(Napi::Env env, const VfInfo& v);
Napi::Array addressesToJs(Napi::Env env, const std::vector<AddressInfo>& addrs);
Napi::Object routeToJs(Napi::Env env, const RouteInfo& r);
Napi::Array routesToJs(Napi::Env env, const std::vector<RouteInfo>& routes);
// Everything a give-back needs to put them back (src/net/types.ts AddressDetail, RouteDetail).
Napi::Array addressDetailsToJs(Napi::Env env, const std::vector<AddressInfo>& addrs);
Napi::Array routeDetailsToJs(Napi::Env env, const std::vector<RouteInfo>& routes);
Napi::Value driverInfoToJs(Napi::Env env, const std::optional<DriverInfo>& d);

LinkChange linkChangeFromJs(const Napi::Object& o);
NewLink newLinkFromJs(const Napi::Object& o);
// { kind: 'mac'|'vlan'|'spoofchk'|'trust'|'linkState'|'rate', … } (see src/native.ts NativeVfChange).
VfChange vfChangeFromJs(const Napi::Object& o);
// { family: 4|6, dst?: address, dstLen, gateway?, index?, metric?, table? }
// and, for a route put back as it was: protocol, type, tos, flags, prefsrc, src/srcLen, pref, metrics, ccAlgo,
// hops, nhId (src/native.ts NativeRouteSpec)
RouteSpec routeSpecFromJs(const Napi::Object& o);
// src/native.ts NativeAddressSpec
AddressSpec addressSpecFromJs(const Napi::Object& o);

// 4 → AF_INET, 6 → AF_INET6, 0 → AF_UNSPEC.
int familyFromJs(Napi::Env env, int32_t family);

}  // namespace sriovctl
