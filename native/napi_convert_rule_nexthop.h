// Policy rules and nexthop objects between C++ and the plain JS objects of src/net/types.ts (Rule, Nexthop)
// and src/native.ts (NativeRuleSpec, NativeNexthopSpec).
#pragma once

#include <napi.h>

#include <vector>

#include "nexthop.h"
#include "rule.h"

namespace sriovctl {

Napi::Array rulesToJs(Napi::Env env, const std::vector<RuleInfo>& rules);
RuleSpec ruleSpecFromJs(const Napi::Object& o);

Napi::Array nexthopsToJs(Napi::Env env, const std::vector<NexthopInfo>& nexthops);
NexthopSpec nexthopSpecFromJs(const Napi::Object& o);

}  // namespace sriovctl
