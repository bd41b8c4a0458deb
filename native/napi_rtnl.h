// The RtnlSocket class seen by src/native.ts: one rtnetlink connection bound to a namespace, every
// operation a synchronous call on the JS thread (`getLink`) but a move, which has its promise form too
// (`startMoveLink`: made on a libuv pool thread).
#pragma once

#include <napi.h>

namespace sriovctl {

Napi::Function defineRtnlSocket(Napi::Env env);

}  // namespace sriovctl
