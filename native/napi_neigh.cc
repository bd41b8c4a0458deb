#include "napi_neigh.h"

#include <sys/socket.h>

#include "napi_args.h"
#include "napi_convert.h"

namespace sriovctl {

namespace {

template <class T, class Convert>
Napi::Array listToJs(Napi::Env env, const std::vector<T>& items, Convert one) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (size_t i = 0; i < items.size(); i++) out.Set(static_cast<uint32_t>(i), one(items[i]));
  return out;
}

}  // namespace

Napi::Array neighboursToJs(Napi::Env env, const std::vector<NeighbourInfo>& entries) {
  return listToJs(env, entries, [&](const NeighbourInfo& n) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("index", n.index);
    o.Set("family", n.family == AF_INET ? 4 : 6);
    o.Set("address", n.address);
    o.Set("lladdr", n.lladdr ? Napi::Value(Napi::String::New(env, *n.lladdr)) : env.Null());
    o.Set("state", n.state);
    o.Set("flags", n.flags);
    return o;
  });
}

Napi::Array qdiscsToJs(Napi::Env env, const std::vector<QdiscInfo>& qdiscs) {
  return listToJs(env, qdiscs, [&](const QdiscInfo& q) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("index", q.index);
    o.Set("handle", q.handle);
    o.Set("parent", q.parent);
    o.Set("kind", q.kind);
    o.Set("options", q.options);
    return o;
  });
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
