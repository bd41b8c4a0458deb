#include "run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "deadline.h"
#include "sys_failure.h"

namespace sriovctl {

namespace {

struct Pipe {
  int r = -1;
  int w = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) throwErrno("pipe2");
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    closeRead();
    closeWrite();
  }
  void closeRead() {
    if (r >= 0) ::close(r);
    r = -1;
  }
  void closeWrite() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) throwErrno("fcntl O_NONBLOCK");
}

std::vector<char*> cStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// What the child does between vfork and exec, prepared by the parent: only async-signal-safe calls run there.
struct ChildSetup {
  const char* path;
  char* const* argv;
  char* const* envp;
  int in, out, err;  // become 0, 1, 2
  int report;        // a failed exec writes its errno here (O_CLOEXEC: a successful exec closes it)
  pid_t parent;
};

// The child dies with the thread that started it (PR_SET_PDEATHSIG): a plugin whose caller was killed has no one
// to answer, and an IPAM plugin left running would allocate after the runtime's DEL of the failed ADD has come
// and gone. It starts with every signal at its default and none blocked: Node ignores SIGPIPE, and an ignored
// signal stays ignored across exec.
[[noreturn]] __attribute__((noinline)) void execChild(const ChildSetup* c) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != c->parent) _exit(127);  // the caller died before prctl: nobody waits for this child
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, &dfl, nullptr);  // EINVAL for SIGKILL/SIGSTOP: fine
  int e = 0;
  if (dup2(c->in, 0) < 0 || dup2(c->out, 1) < 0 || dup2(c->err, 2) < 0) {
    e = errno;
  } else {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(c->path, c->argv, c->envp);
    e = errno;
  }
  ssize_t ignored = write(c->report, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

pid_t spawnChild(const ProgramRun& run, Pipe& in, Pipe& out, Pipe& err) {
  auto argv = cStrings(run.argv);
  auto envp = cStrings(run.env);
  Pipe report;
  const ChildSetup setup{run.path.c_str(), argv.data(), envp.data(), in.r, out.w, err.w, report.w, getpid()};
  // no signal handler may run in the child while it shares our memory: all blocked across vfork
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = vfork();
  if (pid == 0) execChild(&setup);
  int forkErr = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) throw SysFailure(forkErr, "vfork " + run.path);
  report.closeWrite();
  int execErr = 0;
  ssize_t n;
  do n = ::read(report.r, &execErr, sizeof execErr);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof execErr)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw SysFailure(execErr, "exec " + run.path);
  }
  return pid;
}

// A pidfd turns "the child exited" into a poll event, so a grandchild that keeps our pipes open cannot hold
// us past the child's exit. Without one (a kernel before 5.3) the pipes' end of file stands in.
int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// Reads what is there; false at end of file.
bool drain(int fd, std::string& into, size_t max, bool& tooLarge) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      if (into.size() + static_cast<size_t>(n) > max) {
        tooLarge = true;
        return false;
      }
      into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return true;
    throwErrno("read child output");
  }
}

// SIGKILL is final for any process not stuck in the kernel; how long we wait to reap it after that.
constexpr int kReapBoundMs = 5000;

// Waits for the child to exit, at most until `deadline`: a readable pidfd, or (no pidfd) waitid polls that
// leave the zombie in place. True once the child has exited (waitpid then reaps it at once).
bool awaitExit(pid_t pid, int pidfd, Deadline deadline) {
  if (pidfd >= 0) return waitReady(pidfd, POLLIN, deadline, "wait for child") != 0;
  for (;;) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0 && errno != EINTR)
      throwErrno("waitid");
    if (info.si_pid == pid) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// On an error path: the child must not outlive the call, and reaping it must not hang us either.
void killAndReap(pid_t pid, int pidfd) {
  kill(pid, SIGKILL);
  try {
    if (!awaitExit(pid, pidfd, deadlineIn(kReapBoundMs))) return;
  } catch (...) {
    return;
  }
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

ProgramResult runProgram(const ProgramRun& run) {
  Pipe in, out, err;
  pid_t pid = spawnChild(run, in, out, err);
  in.closeRead();
  out.closeWrite();
  err.closeWrite();
  int pidfd = openPidfd(pid);
  ProgramResult result;
  bool exited = false;
  try {
    setNonBlocking(in.w);
    setNonBlocking(out.r);
    setNonBlocking(err.r);
    size_t written = 0;
    if (run.stdinData.empty()) in.closeWrite();
    const Deadline deadline = deadlineIn(run.timeoutMs);
    // Until the child exits: a child that closed stdout and stderr (or handed them to a grandchild) is still
    // running, and the deadline holds for it all the same.
    while (!exited && (out.r >= 0 || err.r >= 0 || pidfd >= 0)) {
      pollfd fds[4];
      nfds_t n = 0;
      auto add = [&](int fd, short events) {
        if (fd >= 0) fds[n++] = pollfd{fd, events, 0};
      };
      add(in.w, POLLOUT);
      add(out.r, POLLIN);
      add(err.r, POLLIN);
      add(pidfd, POLLIN);
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        result.timedOut = true;
        break;
      }
      int ready = poll(fds, n, static_cast<int>(left));
      if (ready < 0) {
        if (errno == EINTR) continue;
        throwErrno("poll child pipes");
      }
      for (nfds_t i = 0; i < n; i++) {
        if (!fds[i].revents) continue;
        int fd = fds[i].fd;
        if (fd == in.w) {
          ssize_t w = ::write(in.w, run.stdinData.data() + written, run.stdinData.size() - written);
          if (w > 0) written += static_cast<size_t>(w);
          // EPIPE: the child exited or closed stdin without reading it all (plugins answer VERSION so)
          if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == run.stdinData.size()) in.closeWrite();
        } else if (fd == out.r) {
          // Too much output: the pipe stays open until the SIGKILL below, so the child dies of that, not of a
          // SIGPIPE it might turn into an exit status of its own.
          if (!drain(out.r, result.out, run.maxOutput, result.outputTooLarge) && !result.outputTooLarge) out.closeRead();
        } else if (fd == err.r) {
          if (!drain(err.r, result.err, run.maxOutput, result.outputTooLarge) && !result.outputTooLarge) err.closeRead();
        } else if (fd == pidfd) {
          exited = true;
        }
      }
      if (result.outputTooLarge) break;
    }
    // No pidfd (a kernel before 5.3): both pipes are at end of file, the child may still run.
    if (!exited && !result.timedOut && !result.outputTooLarge) {
      exited = awaitExit(pid, -1, deadline);
      result.timedOut = !exited;
    }
    if (exited) {
      // what the child wrote before it exited is in the pipes already
      if (out.r >= 0) drain(out.r, result.out, run.maxOutput, result.outputTooLarge);
      if (err.r >= 0) drain(err.r, result.err, run.maxOutput, result.outputTooLarge);
    }
  } catch (...) {
    killAndReap(pid, pidfd);
    if (pidfd >= 0) ::close(pidfd);
    throw;
  }
  if (!exited) {
    // SIGKILL ends any process that is not stuck in the kernel; one that is (a driver wedged in D state) stays
    // a child we never reap (init does, once we exit) rather than holding the caller past its deadline.
    kill(pid, SIGKILL);
    exited = awaitExit(pid, pidfd, deadlineIn(kReapBoundMs));
  }
  if (pidfd >= 0) ::close(pidfd);
  if (!exited) {
    result.signal = SIGKILL;
    return result;
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) throwErrno("waitpid");
  }
  if (WIFEXITED(wstatus)) result.status = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) result.signal = WTERMSIG(wstatus);
  return result;
}

}  // namespace sriovctl
