// fsync(2) of a few descriptors on a thread of its own, so that making a write durable overlaps a slow kernel call
// the caller makes meanwhile (moving a NIC waits ~15 ms for an RCU grace period while the disk flushes). The
// descriptors stay the caller's: it closes them only after finishFsync.
#pragma once

#include <memory>
#include <vector>

namespace sriovctl {

struct FsyncJob;

// Starts fsync of each fd, in order, on a new thread (in place, before returning, if no thread can be made).
std::shared_ptr<FsyncJob> startFsync(std::vector<int> fds);

// Waits for the job; throws SysFailure ('fsync') with the first failure's errno.
void finishFsync(FsyncJob& job);

}  // namespace sriovctl
