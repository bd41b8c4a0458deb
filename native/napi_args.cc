#include "napi_args.h"

#include <cmath>

namespace sriovctl {

namespace {

[[noreturn]] void badArg(Napi::Env env, const char* what, const char* expected) {
  throw Napi::TypeError::New(env, std::string(what) + ": expected " + expected);
}

double integral(Napi::Env env, const Napi::Value& v, const char* what, double lo, double hi) {
  if (!v.IsNumber()) badArg(env, what, "an integer");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::floor(d) != d || d < lo || d > hi) badArg(env, what, "an integer in range");
  return d;
}

}  // namespace

int32_t argInt(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return static_cast<int32_t>(integral(info.Env(), info[i], what, INT32_MIN, INT32_MAX));
}

uint32_t argU32(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return static_cast<uint32_t>(integral(info.Env(), info[i], what, 0, UINT32_MAX));
}

bool argBool(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (!info[i].IsBoolean()) badArg(info.Env(), what, "a boolean");
  return info[i].As<Napi::Boolean>().Value();
}

std::string argString(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (!info[i].IsString()) badArg(info.Env(), what, "a string");
  return info[i].As<Napi::String>().Utf8Value();
}

std::vector<std::string> argStringArray(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (!info[i].IsArray()) badArg(info.Env(), what, "an array of strings");
  Napi::Array a = info[i].As<Napi::Array>();
  std::vector<std::string> out;
  out.reserve(a.Length());
  for (uint32_t k = 0; k < a.Length(); k++) {
    Napi::Value v = a.Get(k);
    if (!v.IsString()) badArg(info.Env(), what, "an array of strings");
    out.push_back(v.As<Napi::String>().Utf8Value());
  }
  return out;
}

Napi::Object argObject(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (!info[i].IsObject()) badArg(info.Env(), what, "an object");
  return info[i].As<Napi::Object>();
}

std::optional<std::string> optString(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return std::nullopt;
  if (!v.IsString()) badArg(o.Env(), key, "a string");
  return v.As<Napi::String>().Utf8Value();
}

std::optional<double> optNumber(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return std::nullopt;
  if (!v.IsNumber()) badArg(o.Env(), key, "a number");
  return v.As<Napi::Number>().DoubleValue();
}

std::optional<uint32_t> optU32(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return std::nullopt;
  return static_cast<uint32_t>(integral(o.Env(), v, key, 0, UINT32_MAX));
}

std::optional<int32_t> optInt(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return std::nullopt;
  return static_cast<int32_t>(integral(o.Env(), v, key, INT32_MIN, INT32_MAX));
}

std::optional<bool> optBool(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return std::nullopt;
  if (!v.IsBoolean()) badArg(o.Env(), key, "a boolean");
  return v.As<Napi::Boolean>().Value();
}

std::optional<Mac> optMac(const Napi::Object& o, const char* key) {
  auto s = optString(o, key);
  if (!s) return std::nullopt;
  Mac m{};
  if (!parseMac(*s, m)) badArg(o.Env(), key, "a MAC address 'aa:bb:cc:dd:ee:ff'");
  return m;
}

}  // namespace sriovctl
