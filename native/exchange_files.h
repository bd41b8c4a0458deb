// renameat2(RENAME_EXCHANGE): two names swap their files in one step. A file replaced this way (then its old content
// unlinked) is never renamed over an existing name, which on ext4 (auto_da_alloc) starts writing the new file's data
// back at once and makes the rename, and the next unlink of that file, wait on the disk.
#pragma once

#include <string>

namespace sriovctl {

// Swaps the files at paths a and b, both of which must exist. Throws SysFailure (op 'renameat2 exchange').
void exchangeFiles(const std::string& a, const std::string& b);

}  // namespace sriovctl
