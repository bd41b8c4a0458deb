#include "napi_program.h"

#include <cstring>
#include <string>
#include <utility>

#include "napi_args.h"
#include "napi_errors.h"
#include "napi_ops.h"
#include "napi_promise_worker.h"
#include "run_program.h"

namespace sriovctl {

namespace {

ProgramRun programRunOf(const Napi::CallbackInfo& info) {
  return ProgramRun{argString(info, 0, "path"),  argStringArray(info, 1, "argv"), argStringArray(info, 2, "env"),
                    argString(info, 3, "stdin"), argInt(info, 4, "timeoutMs"),    argU32(info, 5, "maxOutput")};
}

Napi::Value resultToJs(Napi::Env env, const ProgramResult& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("status", r.signal ? env.Null() : Napi::Number::New(env, r.status));
  const char* sig = r.signal ? sigabbrev_np(r.signal) : nullptr;
  o.Set("signal", r.signal ? Napi::String::New(env, sig ? std::string("SIG") + sig : std::to_string(r.signal))
                           : env.Null());
  o.Set("timedOut", r.timedOut);
  o.Set("outputTooLarge", r.outputTooLarge);
  o.Set("stdout", Napi::String::New(env, r.out));
  o.Set("stderr", Napi::String::New(env, r.err));
  return o;
}

}  // namespace

Napi::Value RunProgram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&] { return resultToJs(env, runProgram(programRunOf(info))); });
}

Napi::Value StartProgram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    // runProgram touches nothing shared (its own pipes, its own child), so it may run on any thread; the pool
    // thread never changes namespace (DESIGN.md), so the child starts in the process's own
    return PromiseWorker<ProgramResult, resultToJs>::start(env, "sriovctl.startProgram",
                                                           [run = programRunOf(info)] { return runProgram(run); });
  });
}

}  // namespace sriovctl
