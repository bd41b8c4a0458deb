// Module registration and the functions that need no socket: namespaces, mounts, sysctl, flock, running a program,
// and the pure wire-format helpers the unit tests use without root.
#include <napi.h>

#include <cstring>
#include <string>

#include "dir_entries.h"
#include "flock.h"
#include "fsync_job.h"
#include "link.h"
#include "mounts.h"
#include "napi_args.h"
#include "napi_convert.h"
#include "napi_errors.h"
#include "napi_ops.h"
#include "napi_program.h"
#include "napi_rtnl.h"
#include "netns.h"
#include "read_fd.h"
#include "rule.h"
#include "nl_socket.h"
#include "peer_cred.h"
#include "sysctl.h"
#include "vf.h"

namespace sriovctl {

namespace {

Napi::Object netnsToJs(Napi::Env env, const NetnsHandle& h) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("fd", h.fd);
  o.Set("dev", static_cast<double>(h.dev));
  o.Set("ino", static_cast<double>(h.ino));
  return o;
}

Napi::Value NetnsOpen(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] { return netnsToJs(info.Env(), openNetns(argString(info, 0, "path"))); });
}

Napi::Value NetnsOpenInRoot(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] { return netnsToJs(info.Env(), openNetnsInRoot(argString(info, 0, "root"), argString(info, 1, "path"))); });
}

Napi::Value NetnsOpenPid(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] { return netnsToJs(info.Env(), openNetnsOfPid(argInt(info, 0, "pid"))); });
}

Napi::Value NetnsIdentity(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] { return netnsToJs(info.Env(), netnsIdentity(argInt(info, 0, "fd"))); });
}

Napi::Value NetnsCreateAnonymous(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] { return netnsToJs(info.Env(), createAnonymousNetns()); });
}

Napi::Value BindMount(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    bindMount(argString(info, 0, "source"), argString(info, 1, "target"), argBool(info, 2, "recursive"));
    return info.Env().Undefined();
  });
}

Napi::Value MakeSharedMount(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    makeSharedMount(argString(info, 0, "target"));
    return info.Env().Undefined();
  });
}

Napi::Value DetachMount(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    detachMount(argString(info, 0, "target"));
    return info.Env().Undefined();
  });
}

Napi::Value SysctlRead(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    return Napi::String::New(info.Env(), readSysctl(argInt(info, 0, "nsFd"), argString(info, 1, "key")));
  });
}

// sysctlReadDirs(nsFd, [dir, …], maxEntries) → [[[name, value], …] | null, …]
Napi::Value SysctlReadDirs(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    Napi::Env env = info.Env();
    auto dirs = readSysctlDirs(argInt(info, 0, "nsFd"), argStringArray(info, 1, "dirs"), argU32(info, 2, "maxEntries"));
    Napi::Array out = Napi::Array::New(env, dirs.size());
    for (uint32_t d = 0; d < dirs.size(); d++) {
      if (!dirs[d]) {
        out.Set(d, env.Null());
        continue;
      }
      Napi::Array entries = Napi::Array::New(env, dirs[d]->size());
      for (uint32_t i = 0; i < dirs[d]->size(); i++) {
        Napi::Array pair = Napi::Array::New(env, 2);
        pair.Set(0u, (*dirs[d])[i].first);
        pair.Set(1u, (*dirs[d])[i].second);
        entries.Set(i, pair);
      }
      out.Set(d, entries);
    }
    return out;
  });
}

Napi::Value SysctlWrite(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    writeSysctl(argInt(info, 0, "nsFd"), argString(info, 1, "key"), argString(info, 2, "value"));
    return info.Env().Undefined();
  });
}

// sysctlWriteEach(nsFd, [key, …], [value, …]) → [null | 'ENOENT', …]
Napi::Value SysctlWriteEach(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    Napi::Env env = info.Env();
    auto keys = argStringArray(info, 1, "keys");
    auto values = argStringArray(info, 2, "values");
    if (keys.size() != values.size()) throw SysFailure::withDetail(EINVAL, "sysctl write", "as many values as keys");
    auto failed = writeSysctlsEach(argInt(info, 0, "nsFd"), keys, values);
    Napi::Array out = Napi::Array::New(env, failed.size());
    for (uint32_t i = 0; i < failed.size(); i++) out.Set(i, failed[i] ? Napi::Value(Napi::String::New(env, *failed[i])) : env.Null());
    return out;
  });
}

// sysctlReadEach(nsFd, [key, …]) → [value | null, …]
Napi::Value SysctlReadEach(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    Napi::Env env = info.Env();
    auto values = readSysctlsEach(argInt(info, 0, "nsFd"), argStringArray(info, 1, "keys"));
    Napi::Array out = Napi::Array::New(env, values.size());
    for (uint32_t i = 0; i < values.size(); i++) out.Set(i, values[i] ? Napi::Value(Napi::String::New(env, *values[i])) : env.Null());
    return out;
  });
}

Napi::Value LockFd(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    bool locked = lockFd(argInt(info, 0, "fd"), argBool(info, 1, "exclusive"), argInt(info, 2, "timeoutMs"));
    return Napi::Boolean::New(info.Env(), locked);
  });
}

Napi::Value UnlockFd(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    unlockFd(argInt(info, 0, "fd"));
    return info.Env().Undefined();
  });
}

using FsyncHandle = std::shared_ptr<FsyncJob>;

// startFsync([fd, ...]) → an opaque handle for finishFsync.
Napi::Value StartFsync(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(info.Env(), "fds must be an array");
    Napi::Array arr = info[0].As<Napi::Array>();
    std::vector<int> fds;
    for (uint32_t i = 0; i < arr.Length(); i++) {
      Napi::Value v = arr.Get(i);
      if (!v.IsNumber()) throw Napi::TypeError::New(info.Env(), "fds must be numbers");
      fds.push_back(v.As<Napi::Number>().Int32Value());
    }
    auto* handle = new FsyncHandle(startFsync(std::move(fds)));
    return Napi::External<FsyncHandle>::New(info.Env(), handle, [](Napi::Env, FsyncHandle* h) { delete h; });
  });
}

Napi::Value FinishFsync(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    if (info.Length() < 1 || !info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "not an fsync handle");
    finishFsync(**info[0].As<Napi::External<FsyncHandle>>().Data());
    return info.Env().Undefined();
  });
}

// dirEntryInodes(dir) → 'name/inodeHex/name/inodeHex/…/': one string ('/' is in no name) for a thousand entries,
// split in JS — an array of as many strings costs more than the directory read
Napi::Value DirEntryInodes(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    std::string out;
    for (const auto& [name, inode] : dirEntryInodes(argString(info, 0, "dir"))) {
      out += name;
      out += '/';
      out += inode;
      out += '/';
    }
    return Napi::String::New(info.Env(), out);
  });
}

// readFd(fd, timeoutMs, maxBytes) → Buffer: everything up to end of file, within the deadline and the bound.
Napi::Value ReadFd(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    std::string data = readToEnd(argInt(info, 0, "fd"), argInt(info, 1, "timeoutMs"), argU32(info, 2, "maxBytes"));
    return Napi::Buffer<char>::Copy(info.Env(), data.data(), data.size());
  });
}

// peerCred(fd) → {pid, uid, gid}: SO_PEERCRED of a connected unix socket.
Napi::Value PeerCredOf(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    PeerCred c = peerCred(argInt(info, 0, "fd"));
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("pid", static_cast<double>(c.pid));
    o.Set("uid", static_cast<double>(c.uid));
    o.Set("gid", static_cast<double>(c.gid));
    return o;
  });
}

// peerPidfd(fd) → {pidfd, pid, uid, fromSocket}: a pidfd of the peer of a connected unix socket.
Napi::Value PeerPidfdOf(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] {
    PeerPidfd p = peerPidfd(argInt(info, 0, "fd"));
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("pidfd", static_cast<double>(p.pidfd));
    o.Set("pid", static_cast<double>(p.pid));
    o.Set("uid", static_cast<double>(p.uid));
    o.Set("fromSocket", p.fromSocket);
    return o;
  });
}

// unixPeerInode(fd) → number: the inode of the other end of a connected unix socket.
Napi::Value UnixPeerInode(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&]() -> Napi::Value { return Napi::Number::New(info.Env(), unixPeerInode(argInt(info, 0, "fd"))); });
}

// pidfdAlive(pidfd) → boolean.
Napi::Value PidfdAlive(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), pidfdAlive(argInt(info, 0, "pidfd"))); });
}

// encodeSetVf(pfIndex, vf, change, seq) → Buffer: the exact request setVf would send.
Napi::Value EncodeSetVf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&] {
    int pfIndex = argInt(info, 0, "pfIndex");
    uint32_t vf = argU32(info, 1, "vf");
    VfChange change = vfChangeFromJs(argObject(info, 2, "change"));
    NlRequest req = encodeVfChange(pfIndex, vf, change);
    req.setSeq(argU32(info, 3, "seq"));
    return Napi::Buffer<uint8_t>::Copy(env, req.data(), req.size());
  });
}

Napi::Value BufferArg(const Napi::CallbackInfo& info, size_t i) {
  if (!info[i].IsBuffer()) throw Napi::TypeError::New(info.Env(), "expected a Buffer");
  return info[i];
}

// parseLinkMessages(buffer) → Link[]: every RTM_NEWLINK in a buffer of concatenated messages.
Napi::Value ParseLinkMessages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&] {
    auto buf = BufferArg(info, 0).As<Napi::Buffer<uint8_t>>();
    return linksToJs(env, parseLinkMessages(buf.Data(), buf.Length()));
  });
}

// parseNetlinkError(buffer, op) → SysError | null: the first NLMSG_ERROR / NLMSG_DONE in the buffer.
Napi::Value ParseNetlinkError(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    auto buf = BufferArg(info, 0).As<Napi::Buffer<uint8_t>>();
    std::string op = argString(info, 1, "op");
    std::optional<SysFailure> failure;
    bool seen = false;
    forEachMessage(buf.Data(), buf.Length(), [&](const nlmsghdr* h) {
      if (seen) return;
      if (h->nlmsg_type == NLMSG_ERROR) failure = failureFromError(h, op);
      else if (h->nlmsg_type == NLMSG_DONE) failure = failureFromDone(h, op);
      else return;
      seen = true;
    });
    if (!seen) throw Napi::TypeError::New(env, "no NLMSG_ERROR or NLMSG_DONE message in the buffer");
    if (!failure) return env.Null();
    return makeSysError(env, *failure);
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  env.SetInstanceData(data);
  Napi::Function rtnl = defineRtnlSocket(env);
  data->rtnlSocketClass = Napi::Persistent(rtnl);

  exports.Set("setErrorClass", Napi::Function::New(env, SetErrorClass, "setErrorClass"));
  exports.Set("RtnlSocket", rtnl);
  exports.Set("netnsOpen", Napi::Function::New(env, NetnsOpen, "netnsOpen"));
  exports.Set("netnsOpenInRoot", Napi::Function::New(env, NetnsOpenInRoot, "netnsOpenInRoot"));
  exports.Set("netnsOpenPid", Napi::Function::New(env, NetnsOpenPid, "netnsOpenPid"));
  exports.Set("netnsIdentity", Napi::Function::New(env, NetnsIdentity, "netnsIdentity"));
  exports.Set("netnsCreateAnonymous", Napi::Function::New(env, NetnsCreateAnonymous, "netnsCreateAnonymous"));
  exports.Set("bindMount", Napi::Function::New(env, BindMount, "bindMount"));
  exports.Set("makeSharedMount", Napi::Function::New(env, MakeSharedMount, "makeSharedMount"));
  exports.Set("detachMount", Napi::Function::New(env, DetachMount, "detachMount"));
  exports.Set("sysctlRead", Napi::Function::New(env, SysctlRead, "sysctlRead"));
  exports.Set("sysctlReadDirs", Napi::Function::New(env, SysctlReadDirs, "sysctlReadDirs"));
  exports.Set("sysctlWrite", Napi::Function::New(env, SysctlWrite, "sysctlWrite"));
  exports.Set("sysctlWriteEach", Napi::Function::New(env, SysctlWriteEach, "sysctlWriteEach"));
  exports.Set("sysctlReadEach", Napi::Function::New(env, SysctlReadEach, "sysctlReadEach"));
  exports.Set("lockFd", Napi::Function::New(env, LockFd, "lockFd"));
  exports.Set("unlockFd", Napi::Function::New(env, UnlockFd, "unlockFd"));
  exports.Set("dirEntryInodes", Napi::Function::New(env, DirEntryInodes, "dirEntryInodes"));
  exports.Set("startFsync", Napi::Function::New(env, StartFsync, "startFsync"));
  exports.Set("finishFsync", Napi::Function::New(env, FinishFsync, "finishFsync"));
  exports.Set("readFd", Napi::Function::New(env, ReadFd, "readFd"));
  exports.Set("peerCred", Napi::Function::New(env, PeerCredOf, "peerCred"));
  exports.Set("peerPidfd", Napi::Function::New(env, PeerPidfdOf, "peerPidfd"));
  exports.Set("unixPeerInode", Napi::Function::New(env, UnixPeerInode, "unixPeerInode"));
  exports.Set("pidfdAlive", Napi::Function::New(env, PidfdAlive, "pidfdAlive"));
  exports.Set("runProgram", Napi::Function::New(env, RunProgram, "runProgram"));
  exports.Set("startProgram", Napi::Function::New(env, StartProgram, "startProgram"));
  exports.Set("encodeSetVf", Napi::Function::New(env, EncodeSetVf, "encodeSetVf"));
  exports.Set("parseLinkMessages", Napi::Function::New(env, ParseLinkMessages, "parseLinkMessages"));
  exports.Set("parseNetlinkError", Napi::Function::New(env, ParseNetlinkError, "parseNetlinkError"));
  exports.Set("namedRuleAttributes", arrayToJs(env, namedRuleAttrTypes(), [&](uint16_t t) { return Napi::Number::New(env, t); }));
  return exports;
}

}  // namespace

}  // namespace sriovctl

static Napi::Object InitSriovctl(Napi::Env env, Napi::Object exports) { return sriovctl::Init(env, exports); }

NODE_API_MODULE(sriovctl, InitSriovctl)
