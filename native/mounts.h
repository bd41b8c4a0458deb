// The three mount(2) calls a named network namespace needs (what `ip netns add/del` does): a bind mount (a
// namespace fd onto its file, or a directory onto itself), making a mount point shared, and a lazy unmount.
#pragma once

#include <string>

namespace sriovctl {

void bindMount(const std::string& source, const std::string& target, bool recursive);
// MS_SHARED | MS_REC: mounts made under target propagate to its peers (EINVAL: target is not a mount point).
void makeSharedMount(const std::string& target);
// umount2(MNT_DETACH).
void detachMount(const std::string& target);

}  // namespace sriovctl
