// Neighbour entries and qdiscs between the addon's structs and the JS values src/native.ts declares.
#pragma once

#include <napi.h>

#include <vector>

#include "neigh.h"
#include "qdisc.h"

namespace sriovctl {

Napi::Array neighboursToJs(Napi::Env env, const std::vector<NeighbourInfo>& entries);
// { index, family (4|6), address, lladdr?, state, flags }, validated by src/net already
NeighbourSpec neighbourSpecFromJs(const Napi::Object& o);
Napi::Array qdiscsToJs(Napi::Env env, const std::vector<QdiscInfo>& qdiscs);

}  // namespace sriovctl
