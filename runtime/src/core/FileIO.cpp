//===- FileIO.cpp - whole-file reads for the runtime ----------------------===//
#include "FileIO.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace symc {

int openRegularFile(const std::string &path, uint64_t &size, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || ::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    error = fd < 0 ? std::strerror(errno) : "not a regular file";
    if (fd >= 0)
      ::close(fd);
    return -1;
  }
  size = static_cast<uint64_t>(info.st_size);
  return fd;
}

bool readWholeFile(const std::string &path, std::vector<uint8_t> &bytes) {
  uint64_t size = 0;
  std::string error;
  int fd = openRegularFile(path, size, error);
  if (fd < 0)
    return false;
  bytes.resize(static_cast<size_t>(size));
  bool ok = true;
  for (size_t done = 0; ok && done < bytes.size();) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    ok = n > 0;
    done += ok ? static_cast<size_t>(n) : 0;
  }
  ::close(fd);
  return ok;
}

} // namespace symc
