// Reading arguments handed over by src/net (already validated there): a wrong type here is a bug in the
// TypeScript layer, reported as a TypeError naming the argument.
#pragma once

#include <napi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hwaddr.h"

namespace sriovctl {

int32_t argInt(const Napi::CallbackInfo& info, size_t i, const char* what);
uint32_t argU32(const Napi::CallbackInfo& info, size_t i, const char* what);
bool argBool(const Napi::CallbackInfo& info, size_t i, const char* what);
std::string argString(const Napi::CallbackInfo& info, size_t i, const char* what);
Napi::Object argObject(const Napi::CallbackInfo& info, size_t i, const char* what);
std::vector<std::string> argStringArray(const Napi::CallbackInfo& info, size_t i, const char* what);

// Object fields: absent or undefined → nullopt; present with the wrong type → TypeError.
std::optional<std::string> optString(const Napi::Object& o, const char* key);
std::optional<double> optNumber(const Napi::Object& o, const char* key);
std::optional<uint32_t> optU32(const Napi::Object& o, const char* key);
std::optional<int32_t> optInt(const Napi::Object& o, const char* key);
std::optional<bool> optBool(const Napi::Object& o, const char* key);
std::optional<Mac> optMac(const Napi::Object& o, const char* key);

template <class T>
T required(Napi::Env env, std::optional<T> v, const char* key) {
  if (!v) throw Napi::TypeError::New(env, std::string("missing field '") + key + "'");
  return *v;
}

}  // namespace sriovctl
