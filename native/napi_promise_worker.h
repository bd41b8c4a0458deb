// A call run on a libuv pool thread and settled as a promise on the JS thread: the JS thread serves other work
// while a slow kernel call (a namespace move waits ~15 ms for an RCU barrier) or a child program runs. `run` must
// touch nothing the JS thread uses meanwhile without a lock of its own, and never change the pool thread's
// namespace.
#pragma once

#include <napi.h>

#include <cerrno>
#include <exception>
#include <functional>
#include <optional>
#include <utility>

#include "napi_errors.h"
#include "sys_failure.h"

namespace sriovctl {

template <class Result, Napi::Value (*ToJs)(Napi::Env, const Result&)>
class PromiseWorker : public Napi::AsyncWorker {
 public:
  // Queues run() on the pool; the promise resolves with ToJs(result) or rejects with its SysError.
  static Napi::Promise start(Napi::Env env, const char* name, std::function<Result()> run) {
    auto* worker = new PromiseWorker(env, name, std::move(run));
    Napi::Promise p = worker->deferred_.Promise();
    worker->Queue();  // deletes itself once settled
    return p;
  }

  void Execute() override {
    try {
      result_ = run_();
    } catch (const SysFailure& f) {
      failure_ = f;
    } catch (const std::exception& e) {
      failure_ = SysFailure::withDetail(EIO, "native", e.what());
    }
  }

  void OnOK() override {
    Napi::HandleScope scope(Env());
    if (failure_)
      deferred_.Reject(makeSysError(Env(), *failure_));
    else
      deferred_.Resolve(ToJs(Env(), *result_));
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  PromiseWorker(Napi::Env env, const char* name, std::function<Result()> run)
      : Napi::AsyncWorker(env, name), run_(std::move(run)), deferred_(Napi::Promise::Deferred::New(env)) {}

  std::function<Result()> run_;
  std::optional<Result> result_;
  std::optional<SysFailure> failure_;
  Napi::Promise::Deferred deferred_;
};

}  // namespace sriovctl
