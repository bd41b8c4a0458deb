// Running a program to completion with its stdin given and its stdout/stderr captured: vfork+exec (the child
// dies with the thread that started it), pipes, poll, a deadline that holds until the child is gone (SIGKILL,
// then a bounded wait to reap it). Safe on any thread: it shares nothing. The CNI plugin uses it to call IPAM
// plugins without loading Node's child_process (and with it net and stream), which a fresh process per call
// pays for at every start.
#pragma once

#include <string>
#include <vector>

namespace sriovctl {

struct ProgramRun {
  std::string path;                // absolute path of the executable
  std::vector<std::string> argv;   // argv[0] included
  std::vector<std::string> env;    // "NAME=value"
  std::string stdinData;           // written to the child's stdin, which is then closed
  int timeoutMs;                   // SIGKILL after this long
  size_t maxOutput;                // per stream; more is an error (the child is killed)
};

struct ProgramResult {
  int status = -1;  // exit status, or -1 when killed by a signal
  int signal = 0;   // the signal that ended it, or 0
  bool timedOut = false;
  bool outputTooLarge = false;
  std::string out;
  std::string err;
};

// Throws SysFailure when the program cannot be started (ENOENT, EACCES, …) or a syscall fails.
ProgramResult runProgram(const ProgramRun& run);

}  // namespace sriovctl
