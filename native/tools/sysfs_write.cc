// sriovctl-sysfs-write FILE VALUE: one write(2) of VALUE to the existing file FILE (never created), for
// src/sriov/bounded-write.ts. A store into a driver's attribute can block in the kernel for long or forever, so it
// runs in this short-lived child that the caller can abandon at its deadline. The outcome is data: exit status 0,
// or the errno of the failed call (all errno values are below 255), with strerror on stderr for the human
// message; 255 is a usage error.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: sriovctl-sysfs-write FILE VALUE\n");
    return 255;
  }
  const char* value = argv[2];
  const size_t len = std::strlen(value);
  const int fd = open(argv[1], O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    std::fprintf(stderr, "%s\n", std::strerror(err));
    return err;
  }
  ssize_t n;
  do {
    n = write(fd, value, len);
  } while (n < 0 && errno == EINTR);
  // a short store is a driver that took part of the value: as good as a failure
  const int err = n < 0 ? errno : (static_cast<size_t>(n) == len ? 0 : EIO);
  if (close(fd) != 0 && err == 0 && errno != EINTR) {
    const int cerr = errno;
    std::fprintf(stderr, "%s\n", std::strerror(cerr));
    return cerr;
  }
  if (err != 0) std::fprintf(stderr, "%s\n", std::strerror(err));
  return err;
}
