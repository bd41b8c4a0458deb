#include "napi_errors.h"

#include <cstring>

namespace sriovctl {

AddonData& addonData(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

Napi::Value SetErrorClass(const Napi::CallbackInfo& info) {
  if (!info[0].IsFunction()) throw Napi::TypeError::New(info.Env(), "setErrorClass expects a class");
  addonData(info.Env()).sysErrorClass = Napi::Persistent(info[0].As<Napi::Function>());
  return info.Env().Undefined();
}

Napi::Value makeSysError(Napi::Env env, const SysFailure& f) {
  std::string message = strerror(f.err);
  if (!f.detail.empty()) message += " (" + f.detail + ")";
  Napi::Object fields = Napi::Object::New(env);
  fields.Set("code", errnoName(f.err));
  fields.Set("errno", f.err);
  fields.Set("op", f.op);
  if (!f.kernelMessage.empty()) fields.Set("kernelMessage", f.kernelMessage);

  AddonData& data = addonData(env);
  if (!data.sysErrorClass.IsEmpty()) return data.sysErrorClass.New({Napi::String::New(env, message), fields});
  Napi::Object err = Napi::Error::New(env, message).Value();
  for (const char* key : {"code", "errno", "op", "kernelMessage"})
    if (fields.Has(key)) err.Set(key, fields.Get(key));
  return err;
}

Napi::Error asJsError(Napi::Env env, const SysFailure& f) { return Napi::Error(env, makeSysError(env, f)); }

}  // namespace sriovctl
