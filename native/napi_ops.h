// Running one operation on the JS thread. An Op is parsed from the JS arguments, then:
//   typename Op::Result run();                        // throws SysFailure
//   static Napi::Value toJs(Napi::Env, const Result&);
// Netlink calls are synchronous (DESIGN.md: an async variant only where a caller needs it); the one made on a pool
// thread, startMoveLink, holds its connection's lock as every call does (connection.h), and startProgram shares no
// state (napi_program.h).
#pragma once

#include <napi.h>

#include <cerrno>

#include "napi_errors.h"

namespace sriovctl {

// For operations with nothing to return.
struct Done {};
inline Napi::Value undefinedResult(Napi::Env env, const Done&) { return env.Undefined(); }

// Runs fn, turning SysFailure (and any stray C++ exception) into a thrown JS error.
template <class Fn>
Napi::Value guarded(Napi::Env env, Fn&& fn) {
  try {
    return fn();
  } catch (const SysFailure& f) {
    throw asJsError(env, f);
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw asJsError(env, SysFailure::withDetail(EIO, "native", e.what()));
  }
}

template <class Op>
Napi::Value runSync(Napi::Env env, Op& op) {
  return guarded(env, [&] { return Op::toJs(env, op.run()); });
}

}  // namespace sriovctl
