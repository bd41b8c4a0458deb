#include "sysctl.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "dir_entries.h"
#include "netns.h"
#include "sys_failure.h"

namespace sriovctl {

namespace {

std::string pathOf(const std::string& key) { return "/proc/sys/" + key; }

struct FileGuard {
  int fd;
  ~FileGuard() {
    if (fd >= 0) ::close(fd);
  }
};

constexpr size_t kMaxValue = 4096;

// One read of at most a page (a sysctl value is produced whole by the first read); false when refused or longer.
// Opened for reading and writing: the open itself is refused (EACCES) for a sysctl that cannot be both, which a
// snapshot skips (nothing to restore of a read-only one), so that no stat is needed first.
bool readValueAt(int dirFd, const char* name, std::string& out) {
  FileGuard f{openat(dirFd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)};
  if (f.fd < 0) return false;
  char buf[kMaxValue + 1];
  ssize_t n;
  do n = read(f.fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0 || static_cast<size_t>(n) > kMaxValue) return false;
  out.assign(buf, static_cast<size_t>(n));
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return true;
}

// procfs names a sysctl's type in its directory entry; stat only where a filesystem does not
bool isRegularEntry(int dirFd, const dirent& e) {
  if (e.d_type != DT_UNKNOWN) return e.d_type == DT_REG;
  struct stat st;
  return fstatat(dirFd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

namespace {

std::optional<SysctlEntries> readDirHere(const std::string& dir, size_t maxEntries) {
  const std::string op = "sysctl read " + dir;
  DirGuard d{opendir(pathOf(dir).c_str())};
  if (!d.dir) {
    if (errno == ENOENT) return std::nullopt;
    throwErrno(op);
  }
  SysctlEntries out;
  const int dirFd = dirfd(d.dir);
  forEachDirEntry(d.dir, op, [&](const dirent& e) {
    if (e.d_name[0] == '.' || out.size() >= maxEntries) return;
    if (!isRegularEntry(dirFd, e)) return;
    std::string value;
    if (readValueAt(dirFd, e.d_name, value)) out.emplace_back(e.d_name, std::move(value));
  });
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::optional<SysctlEntries>> readSysctlDirs(int nsFd, const std::vector<std::string>& dirs, size_t maxEntries) {
  std::vector<std::optional<SysctlEntries>> out;
  runInNetns(nsFd, [&] {
    for (const std::string& dir : dirs) out.push_back(readDirHere(dir, maxEntries));
  });
  return out;
}

std::vector<std::optional<std::string>> readSysctlsEach(int nsFd, const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> out;
  runInNetns(nsFd, [&] {
    for (const std::string& key : keys) {
      std::string value;
      if (readValueAt(AT_FDCWD, pathOf(key).c_str(), value)) out.emplace_back(std::move(value));
      else out.emplace_back(std::nullopt);
    }
  });
  return out;
}

std::string readSysctl(int nsFd, const std::string& key) {
  const std::string op = "sysctl read " + key;
  std::string value;
  runInNetns(nsFd, [&] {
    FileGuard f{open(pathOf(key).c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throwErrno(op);
    char buf[4096];
    for (;;) {
      ssize_t n = read(f.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throwErrno(op);
      if (n == 0) break;
      value.append(buf, static_cast<size_t>(n));
    }
  });
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

// Inside the namespace already: open, one write (the kernel parses a sysctl value from a single write call).
static void writeHere(const std::string& key, const std::string& value) {
  const std::string op = "sysctl write " + key;
  FileGuard f{open(pathOf(key).c_str(), O_WRONLY | O_CLOEXEC)};
  if (f.fd < 0) throwErrno(op);
  ssize_t n;
  do n = write(f.fd, value.data(), value.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) throwErrno(op);
  if (static_cast<size_t>(n) != value.size()) throw SysFailure::withDetail(EIO, op, "short write");
}

void writeSysctl(int nsFd, const std::string& key, const std::string& value) {
  runInNetns(nsFd, [&] { writeHere(key, value); });
}

std::vector<std::optional<std::string>> writeSysctlsEach(int nsFd, const std::vector<std::string>& keys, const std::vector<std::string>& values) {
  std::vector<std::optional<std::string>> failed;
  runInNetns(nsFd, [&] {
    for (size_t i = 0; i < keys.size(); i++) {
      try {
        writeHere(keys[i], values[i]);
        failed.emplace_back(std::nullopt);
      } catch (const SysFailure& e) {
        failed.emplace_back(errnoName(e.err));
      }
    }
  });
  return failed;
}

}  // namespace sriovctl
