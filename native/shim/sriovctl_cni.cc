// sriovctl-cni, the shim: what kubelet runs. It hands the call (environment + stdin) to `sriovctl daemon` over its
// unix socket and relays the daemon's stdout, stderr and exit code. When no daemon takes the call — no socket,
// refused, no greeting within a bound, or a greeting that says "not here" — nothing has been read yet, so it execs
// the one-shot plugin with its stdin untouched: a DEL always works, daemon or not. A daemon that has read the call
// may still send it back unrun (it asks for a configuration not the daemon's): the one-shot plugin then runs it,
// its stdin replayed from what we read. Every wait is bounded; once the
// request is sent, a reply that is cut short, late or malformed is CNI error 109 naming the cause (the call may
// have half-run in the daemon: the runtime's DEL finishes it, as after a one-shot plugin that died).
// The one-shot plugin starts with the caller's NODE_* variables removed: Node reads them before the plugin's first line
// (NODE_OPTIONS can load code into this root process; NODE_EXTRA_CA_CERTS costs every start a CA bundle's parse).
// The wire format is src/daemon/wire.ts's. Static, C library only: k3s nodes have no glibc.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace {

const char kDefaultSocket[] = "/run/sriovctl/cni.sock";
const unsigned char kProtocolVersion = 2;  // src/daemon/wire.ts PROTOCOL_VERSION
const size_t kMaxStdin = 1 << 20;         // src/cni/stdio.ts MAX_STDIN_BYTES
const size_t kMaxEnv = 256 * 1024;        // src/daemon/wire.ts MAX_ENV_BYTES
const size_t kMaxReplyPart = 16u << 20;   // stdout or stderr of one reply
const size_t kMaxReason = 64 * 1024;      // why the daemon sent a call back
const int kStdinTimeoutMs = 30 * 1000;    // src/cni/stdio.ts STDIN_TIMEOUT_MS
// Bounds on the daemon; the environment may shorten them (SRIOVCTL_DAEMON_WAIT_MS, SRIOVCTL_DAEMON_REPLY_MS).
const int kDefaultGreetingMs = 5 * 1000;  // a daemon greets at accept; longer means wedged or gone
const int kReplyTimeoutMs = 600 * 1000;   // the longest call (a VF count the driver is slow to reach) and a queue
enum StdinState : uint8_t { kRead = 0, kTooLarge = 1, kTimedOut = 2, kNotRead = 3 };

int64_t nowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int envInt(const char* name, int fallback, int lo, int hi) {
  const char* v = getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = strtol(v, &end, 10);
  return (*end || n < lo || n > hi) ? fallback : int(n);
}

void writeAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // nowhere to write: nothing better to do
    p += w;
    n -= size_t(w);
  }
}

std::string jsonEscape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out;
}

// The plugin's error object for what went wrong between us and the daemon (109: src/cni/errors.ts).
[[noreturn]] void failCni(const std::string& msg) {
  std::string out = "{\"cniVersion\":\"1.1.0\",\"code\":109,\"msg\":\"" + jsonEscape("sriovctl-cni: " + msg) +
                    "\",\"details\":\"\"}\n";
  writeAll(1, out.data(), out.size());
  std::string err = "sriovctl-cni: " + msg + "\n";
  writeAll(2, err.data(), err.size());
  _exit(1);
}

std::string selfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, size_t(n));
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
}

bool executable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

// Only absolute PATH entries: an empty or relative one would be the runtime's current directory, which is not ours
// to run a file from as root.
std::string findInPath(const char* name) {
  const char* path = getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return "";
}

// The one-shot plugin, in the order an installation may hold it: the node's payload dir's launcher
// (<dir>/sriovctl.d/oneshot), the packaged executable beside us (run as sriovctl-cni), or a checkout's
// (node + bin/sriovctl-cni.js, we being build/Release/sriovctl-cni). argv[0] is the file to exec.
struct Fallback {
  std::string file;
  std::string argv0;
  std::string script;  // for node: the plugin script; else empty
};

bool findFallback(Fallback* f) {
  std::string dir = selfDir();
  std::string launcher = dir + "/sriovctl.d/oneshot";
  if (executable(launcher)) {
    *f = {launcher, "sriovctl-cni", ""};
    return true;
  }
  std::string packaged = dir + "/sriovctl";
  if (executable(packaged)) {
    *f = {packaged, "sriovctl-cni", ""};
    return true;
  }
  std::string script = dir + "/../../bin/sriovctl-cni.js";
  if (access(script.c_str(), R_OK) == 0) {
    std::string node = findInPath("node");
    if (!node.empty()) {
      *f = {node, node, script};
      return true;
    }
  }
  return false;
}

// This process's environment without the NODE_* variables: the one-shot plugin's. The daemon path sends the whole
// environment: the daemon keeps only the CNI variables and an allow-list of its own.
std::vector<char*> pluginEnvironment() {
  std::vector<char*> env;
  for (char** e = environ; *e; e++) {
    if (strncmp(*e, "NODE_", 5) != 0) env.push_back(*e);
  }
  env.push_back(nullptr);
  return env;
}

[[noreturn]] void execFallback(const std::string& why) {
  Fallback f;
  if (!findFallback(&f)) {
    failCni("no daemon (" + why + ") and no one-shot plugin beside " + selfDir() +
            " (sriovctl.d/oneshot, sriovctl, or ../../bin/sriovctl-cni.js with node on PATH)");
  }
  char* argv[3] = {const_cast<char*>(f.argv0.c_str()), nullptr, nullptr};
  if (!f.script.empty()) argv[1] = const_cast<char*>(f.script.c_str());
  std::vector<char*> env = pluginEnvironment();
  execve(f.file.c_str(), argv, env.data());
  failCni("no daemon (" + why + ") and the one-shot plugin " + f.file + " cannot be run: " + strerror(errno));
}

// Waits until fd is ready for `events` or the deadline passes; false on timeout.
bool waitFor(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - nowMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, int(left > INT_MAX ? INT_MAX : left));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return true;  // let the read or write report it
  }
}

// Reads exactly n bytes: 0 done, else a cause (as text) for the caller to report.
const char* readExact(int fd, char* p, size_t n, int64_t deadline) {
  while (n > 0) {
    if (!waitFor(fd, POLLIN, deadline)) return "no reply in time";
    ssize_t r = read(fd, p, n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) return strerror(errno);
    if (r == 0) return "the connection closed early";
    p += r;
    n -= size_t(r);
  }
  return nullptr;
}

const char* sendAll(int fd, const char* p, size_t n, int64_t deadline) {
  while (n > 0) {
    if (!waitFor(fd, POLLOUT, deadline)) return "the daemon took no request in time";
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) return strerror(errno);
    p += w;
    n -= size_t(w);
  }
  return nullptr;
}

uint32_t le32(const unsigned char* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

void put32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; i++) s->push_back(char((v >> (8 * i)) & 0xff));
}

// stdin, as the one-shot plugin reads it: to its end, at most kMaxStdin bytes, within kStdinTimeoutMs.
StdinState readStdin(std::string* out) {
  int64_t deadline = nowMs() + kStdinTimeoutMs;
  char buf[65536];
  for (;;) {
    if (!waitFor(0, POLLIN, deadline)) return kTimedOut;
    ssize_t r = read(0, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return kRead;  // end (or a closed/invalid stdin, which the plugin reads as empty too)
    if (out->size() + size_t(r) > kMaxStdin) return kTooLarge;
    out->append(buf, size_t(r));
  }
}

int connectDaemon(const std::string& path, std::string* why) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    *why = "socket path too long: " + path;
    return -1;
  }
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *why = std::string("socket: ") + strerror(errno);
    return -1;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    *why = path + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

// The daemon read the call and sent it back unrun (it asks for a configuration not the daemon's: another state
// dir, other plugin dirs): the one-shot plugin runs it, on the stdin we read, replayed from memory. The daemon sends
// back only a call whose stdin was read whole or not at all (VERSION).
[[noreturn]] void sentBack(int fd, const unsigned char* head, StdinState state, const std::string& in, const std::string& path,
                           int64_t deadline) {
  uint32_t reasonLen = le32(head + 4);
  if (reasonLen > kMaxReason) failCni("malformed reply from " + path + ": a reason of " + std::to_string(reasonLen) + " bytes");
  std::string reason(reasonLen, '\0');
  if (const char* cause = readExact(fd, &reason[0], reasonLen, deadline)) failCni("malformed reply from " + path + ": cut short (" + cause + ")");
  close(fd);
  if (state == kRead) {
    int mem = int(syscall(SYS_memfd_create, "stdin", MFD_CLOEXEC));
    if (mem < 0) failCni(std::string("the daemon sent the call back and its stdin cannot be kept (memfd_create: ") + strerror(errno) + ")");
    writeAll(mem, in.data(), in.size());
    if (lseek(mem, 0, SEEK_SET) != 0 || dup2(mem, 0) != 0) failCni(std::string("the daemon sent the call back and its stdin cannot be replayed: ") + strerror(errno));
    close(mem);
  } else if (state != kNotRead) {
    failCni("malformed reply from " + path + ": a call sent back after its stdin was cut short");
  }
  execFallback(path + ": the daemon sent the call back (" + reason + ")");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--print-fallback") == 0) {
    Fallback f;
    if (!findFallback(&f)) return 1;
    printf("%s%s%s\n", f.file.c_str(), f.script.empty() ? "" : " ", f.script.c_str());
    return 0;
  }
  const char* sock = getenv("SRIOVCTL_SOCKET");
  std::string path = sock && *sock ? sock : kDefaultSocket;
  // a failpoint is a fault of the process running the call; the daemon serves every caller, so it runs one-shot
  if (getenv("SRIOVCTL_FAILPOINT")) execFallback("SRIOVCTL_FAILPOINT is set");

  std::string env;
  for (char** e = environ; *e; e++) {
    env.append(*e);
    env.push_back('\0');
  }
  if (env.size() > kMaxEnv) execFallback("the environment is over " + std::to_string(kMaxEnv) + " bytes");

  std::string why;
  int fd = connectDaemon(path, &why);
  if (fd < 0) execFallback(why);
  int64_t greetingDeadline = nowMs() + envInt("SRIOVCTL_DAEMON_WAIT_MS", kDefaultGreetingMs, 1, 600000);
  unsigned char hello[8];
  if (const char* cause = readExact(fd, reinterpret_cast<char*>(hello), sizeof hello, greetingDeadline)) {
    execFallback(path + ": no greeting (" + cause + ")");
  }
  if (memcmp(hello, "SRVD", 4) != 0 || hello[4] != kProtocolVersion) execFallback(path + ": not a sriovctl daemon of this version");
  if (hello[5] != 0) execFallback(path + ": the daemon sent the call back (verdict " + std::to_string(hello[5]) + ")");

  // the daemon takes the call: from here on, no fallback (stdin is being consumed, the call may run)
  std::string in;
  const char* cmd = getenv("CNI_COMMAND");
  StdinState state = cmd && strcmp(cmd, "VERSION") == 0 ? kNotRead : readStdin(&in);
  if (state != kRead) in.clear();
  std::string req = "SRQ1";
  req.push_back(0);  // kind: a CNI call
  req.push_back(char(state));
  req.append(2, '\0');
  put32(&req, uint32_t(env.size()));
  put32(&req, uint32_t(in.size()));
  req += env;
  req += in;
  int64_t replyDeadline = nowMs() + envInt("SRIOVCTL_DAEMON_REPLY_MS", kReplyTimeoutMs, 1, kReplyTimeoutMs);
  if (const char* cause = sendAll(fd, req.data(), req.size(), replyDeadline)) failCni("sending the call to " + path + ": " + cause);
  shutdown(fd, SHUT_WR);

  unsigned char head[16];
  if (const char* cause = readExact(fd, reinterpret_cast<char*>(head), sizeof head, replyDeadline)) {
    failCni("the daemon at " + path + " gave no reply (" + cause + "); the call may have half-run: a DEL finishes it");
  }
  if (memcmp(head, "SRB1", 4) == 0) sentBack(fd, head, state, in, path, replyDeadline);
  if (memcmp(head, "SRP1", 4) != 0) failCni("malformed reply from " + path + ": bad magic");
  uint32_t code = le32(head + 4), outLen = le32(head + 8), errLen = le32(head + 12);
  if (code > 255) failCni("malformed reply from " + path + ": exit code " + std::to_string(code));
  if (outLen > kMaxReplyPart || errLen > kMaxReplyPart) {
    failCni("malformed reply from " + path + ": " + std::to_string(outLen) + "+" + std::to_string(errLen) + " bytes of output (at most " +
            std::to_string(kMaxReplyPart) + " each)");
  }
  std::string out(outLen, '\0'), err(errLen, '\0');
  const char* cause = readExact(fd, &out[0], outLen, replyDeadline);
  if (!cause) cause = readExact(fd, &err[0], errLen, replyDeadline);
  if (cause) failCni("malformed reply from " + path + ": cut short (" + std::string(cause) + ")");
  close(fd);
  writeAll(2, err.data(), err.size());
  writeAll(1, out.data(), out.size());
  return int(code);
}
