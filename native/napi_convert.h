// C++ results → plain JS objects shaped exactly like src/net/types.ts; JS change/spec objects → C++.
#pragma once

#include <napi.h>

#include <vector>

#include "addr.h"
#include "ethtool.h"
#include "link.h"
#include "route.h"
#include "vf.h"

namespace sriovctl {

Napi::Object linkToJs(Napi::Env env, const LinkInfo& l);
Napi::Array linksToJs(Napi::Env env, const std::vector<LinkInfo>& links);
Napi::Object vfToJs(Napi::Env env, const VfInfo& v);
Napi::Array addressesToJs(Napi::Env env, const std::vector<AddressInfo>& addrs);
Napi::Object routeToJs(Napi::Env env, const RouteInfo& r);
Napi::Array routesToJs(Napi::Env env, const std::vector<RouteInfo>& routes);
Napi::Value driverInfoToJs(Napi::Env env, const std::optional<DriverInfo>& d);

LinkChange linkChangeFromJs(const Napi::Object& o);
NewLink newLinkFromJs(const Napi::Object& o);
// { kind: 'mac'|'vlan'|'spoofchk'|'trust'|'linkState'|'rate', … } (see src/native.ts NativeVfChange).
VfChange vfChangeFromJs(const Napi::Object& o);
// { family: 4|6, dst?: address, dstLen, gateway?, index?, metric?, table? }
RouteSpec routeSpecFromJs(const Napi::Object& o);

// 4 → AF_INET, 6 → AF_INET6, 0 → AF_UNSPEC.
int familyFromJs(Napi::Env env, int32_t family);

}  // namespace sriovctl
