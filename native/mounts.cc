#include "mounts.h"

#include <sys/mount.h>

#include "sys_failure.h"

namespace sriovctl {

void bindMount(const std::string& source, const std::string& target, bool recursive) {
  unsigned long flags = MS_BIND | (recursive ? MS_REC : 0);
  if (mount(source.c_str(), target.c_str(), nullptr, flags, nullptr) < 0) throwErrno("mount --bind " + source + " " + target);
}

void makeSharedMount(const std::string& target) {
  if (mount("", target.c_str(), nullptr, MS_SHARED | MS_REC, nullptr) < 0) throwErrno("mount --make-rshared " + target);
}

void detachMount(const std::string& target) {
  if (umount2(target.c_str(), MNT_DETACH) < 0) throwErrno("umount -l " + target);
}

}  // namespace sriovctl
