#include "dir_entries.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "sys_failure.h"

namespace sriovctl {

void forEachDirEntry(DIR* dir, const std::string& op, const std::function<void(const dirent&)>& each) {
  for (;;) {
    errno = 0;
    dirent* e = readdir(dir);
    if (!e) {
      if (errno != 0) throwErrno(op);
      return;
    }
    each(*e);
  }
}

std::vector<std::pair<std::string, std::string>> dirEntryInodes(const std::string& dir) {
  const std::string op = "read directory " + dir;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throwErrno(op);
  DirGuard d{fdopendir(fd)};
  if (!d.dir) {
    int err = errno;
    ::close(fd);
    errno = err;
    throwErrno(op);
  }
  std::vector<std::pair<std::string, std::string>> out;
  forEachDirEntry(d.dir, op, [&](const dirent& e) {
    if (std::strcmp(e.d_name, ".") == 0 || std::strcmp(e.d_name, "..") == 0) return;
    char ino[17];
    std::snprintf(ino, sizeof ino, "%" PRIx64, static_cast<uint64_t>(e.d_ino));
    out.emplace_back(e.d_name, ino);
  });
  return out;
}

}  // namespace sriovctl
