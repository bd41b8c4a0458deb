// runProgram (synchronous, like spawnSync) and startProgram (the same run on a libuv pool thread, a promise):
// the CNI plugin runs its IPAM plugin while the JS thread moves the NIC, so the two waits overlap.
#pragma once

#include <napi.h>

namespace sriovctl {

// runProgram(path, argv, env, stdin, timeoutMs, maxOutput) → { status, signal, timedOut, outputTooLarge, stdout,
// stderr }.
Napi::Value RunProgram(const Napi::CallbackInfo& info);

// startProgram(same arguments) → Promise of the same object; rejects with the SysError runProgram would throw.
Napi::Value StartProgram(const Napi::CallbackInfo& info);

}  // namespace sriovctl
