// Module registration (stub; the foundation fills it in).
#include <napi.h>

static Napi::Object Init(Napi::Env env, Napi::Object exports) { return exports; }

NODE_API_MODULE(sriovctl, Init)
