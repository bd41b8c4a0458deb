#include "exchange_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys_failure.h"

namespace sriovctl {

void exchangeFiles(const std::string& a, const std::string& b) {
  // the raw syscall: a C library may lack the wrapper (glibc before 2.28)
  if (syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0) throwErrno("renameat2 exchange");
}

}  // namespace sriovctl
