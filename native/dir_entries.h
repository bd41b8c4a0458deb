// A directory's entries with their inode numbers (getdents64's d_ino), which Node's readdir does not give: the
// ledger's owner index tells by them, for every record at once, whether an entry was made for the record file there.
#pragma once

#include <dirent.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sriovctl {

// Closes the directory stream it holds.
struct DirGuard {
  DIR* dir;
  ~DirGuard() {
    if (dir) ::closedir(dir);
  }
};

// Calls `each` for every entry of `dir` ('.' and '..' included), in directory order. Throws SysFailure named `op`
// when reading fails.
void forEachDirEntry(DIR* dir, const std::string& op, const std::function<void(const dirent&)>& each);

// (name, inode in lower-case hex) of every entry but '.' and '..', in directory order. The directory is opened
// without following a symbolic link. Throws SysFailure (ENOENT, ENOTDIR, ELOOP, …).
std::vector<std::pair<std::string, std::string>> dirEntryInodes(const std::string& dir);

}  // namespace sriovctl
