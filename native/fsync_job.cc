#include "fsync_job.h"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include "sys_failure.h"

namespace sriovctl {

struct FsyncJob {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int err = 0;  // the first fsync's errno, 0 when all succeeded
};

namespace {

int fsyncAll(const std::vector<int>& fds) {
  int first = 0;
  for (int fd : fds) {
    int r;
    do {
      r = fsync(fd);
    } while (r != 0 && errno == EINTR);
    if (r != 0 && first == 0) first = errno;
  }
  return first;
}

void complete(FsyncJob& job, int err) {
  std::lock_guard<std::mutex> lock(job.mutex);
  job.err = err;
  job.done = true;
  job.finished.notify_all();
}

}  // namespace

std::shared_ptr<FsyncJob> startFsync(std::vector<int> fds) {
  auto job = std::make_shared<FsyncJob>();
  try {
    // detached: the job's state is shared, so the JS handle may be collected before the thread ends
    std::thread([job, fds] { complete(*job, fsyncAll(fds)); }).detach();
  } catch (const std::system_error&) {
    complete(*job, fsyncAll(fds));  // no thread to be had: durable now, only slower
  }
  return job;
}

void finishFsync(FsyncJob& job) {
  std::unique_lock<std::mutex> lock(job.mutex);
  job.finished.wait(lock, [&] { return job.done; });
  if (job.err != 0) throw SysFailure(job.err, "fsync");
}

}  // namespace sriovctl
