// The RtnlSocket class seen by src/native.ts: one rtnetlink connection bound to a namespace, every
// operation both synchronous (`getLink`) and as a promise run off the JS thread (`getLinkAsync`).
#pragma once

#include <napi.h>

namespace sriovctl {

Napi::Function defineRtnlSocket(Napi::Env env);

}  // namespace sriovctl
