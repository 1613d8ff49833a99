//===- FileIO.cpp - whole-file reads for the runtime ----------------------===//
#include "FileIO.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace symc {

bool readWholeFile(const std::string &path, std::vector<uint8_t> &bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat info;
  bool ok = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  if (ok) {
    bytes.resize(static_cast<size_t>(info.st_size));
    for (size_t done = 0; ok && done < bytes.size();) {
      ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      ok = n > 0;
      done += ok ? static_cast<size_t>(n) : 0;
    }
  }
  ::close(fd);
  return ok;
}

} // namespace symc
