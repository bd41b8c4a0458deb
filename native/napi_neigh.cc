#include "napi_neigh.h"

#include <sys/socket.h>

#include "napi_args.h"
#include "napi_convert.h"

namespace sriovctl {

Napi::Array neighboursToJs(Napi::Env env, const std::vector<NeighbourInfo>& entries) {
  Napi::Array out = Napi::Array::New(env, entries.size());
  for (size_t i = 0; i < entries.size(); i++) {
    const NeighbourInfo& n = entries[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("index", n.index);
    o.Set("family", n.family == AF_INET ? 4 : 6);
    o.Set("address", n.address);
    o.Set("lladdr", n.lladdr ? Napi::Value(Napi::String::New(env, *n.lladdr)) : env.Null());
    o.Set("state", n.state);
    o.Set("flags", n.flags);
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

Napi::Array qdiscsToJs(Napi::Env env, const std::vector<QdiscInfo>& qdiscs) {
  Napi::Array out = Napi::Array::New(env, qdiscs.size());
  for (size_t i = 0; i < qdiscs.size(); i++) {
    const QdiscInfo& q = qdiscs[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("index", q.index);
    o.Set("handle", q.handle);
    o.Set("parent", q.parent);
    o.Set("kind", q.kind);
    o.Set("options", q.options);
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

NeighbourSpec neighbourSpecFromJs(const Napi::Object& o) {
  Napi::Env env = o.Env();
  NeighbourSpec spec;
  spec.index = required(env, optInt(o, "index"), "index");
  int family = familyFromJs(env, required(env, optInt(o, "family"), "family"));
  spec.address = parseInet(family, required(env, optString(o, "address"), "address"), "RTM_NEWNEIGH");
  spec.lladdr = optMac(o, "lladdr");
  spec.state = static_cast<uint16_t>(required(env, optU32(o, "state"), "state"));
  spec.flags = static_cast<uint8_t>(required(env, optU32(o, "flags"), "flags"));
  return spec;
}

}  // namespace sriovctl
