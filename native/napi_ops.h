// Running one operation synchronously (on the JS thread) or as a promise (on a libuv pool thread).
// An Op is parsed from the JS arguments on the JS thread, then:
//   typename Op::Result run();                        // any thread; throws SysFailure
//   static Napi::Value toJs(Napi::Env, const Result&); // JS thread
#pragma once

#include <napi.h>

#include <cerrno>
#include <optional>
#include <utility>

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

template <class Op>
class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, Op op)
      : Napi::AsyncWorker(env, "sriovctl"), op_(std::move(op)), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      result_.emplace(op_.run());
    } catch (const SysFailure& f) {
      failure_.emplace(f);
    } catch (const std::exception& e) {
      failure_.emplace(SysFailure::withDetail(EIO, "native", e.what()));
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (failure_) {
      deferred_.Reject(makeSysError(env, *failure_));
      return;
    }
    try {
      deferred_.Resolve(Op::toJs(env, *result_));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Op op_;
  Napi::Promise::Deferred deferred_;
  std::optional<typename Op::Result> result_;
  std::optional<SysFailure> failure_;
};

// Parses the op on the JS thread (a bad argument throws synchronously) and queues it.
template <class Op>
Napi::Value runAsync(Napi::Env env, Op op) {
  auto* worker = new PromiseWorker<Op>(env, std::move(op));
  Napi::Promise p = worker->promise();
  worker->Queue();
  return p;
}

}  // namespace sriovctl
