// SysFailure → the TypeScript SysError (the class is handed to us once by src/native.ts at load time).
#pragma once

#include <napi.h>

#include "sys_failure.h"

namespace sriovctl {

// Per-environment state (worker threads each load their own copy of the addon's JS side).
struct AddonData {
  Napi::FunctionReference sysErrorClass;
  Napi::FunctionReference rtnlSocketClass;
};
AddonData& addonData(Napi::Env env);

// setErrorClass(SysError): remember the constructor used for every failure.
Napi::Value SetErrorClass(const Napi::CallbackInfo& info);

// new SysError(message, { code, errno, op, kernelMessage }) — a plain Error with the same fields if the
// class was never registered.
Napi::Value makeSysError(Napi::Env env, const SysFailure& f);

// For throwing from a synchronous binding: `throw asJsError(env, f);`.
Napi::Error asJsError(Napi::Env env, const SysFailure& f);

}  // namespace sriovctl
