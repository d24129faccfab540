#include "restarter/kube/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace restarter::kube {
namespace {

core::Error fileError(int error, const std::string& path) {
  const core::ErrorKind kind = error == ENOENT || error == ENOTDIR ? core::ErrorKind::NotFound
                               : error == EACCES || error == EPERM ? core::ErrorKind::Forbidden
                                                                   : core::ErrorKind::Unavailable;
  return core::makeError(kind, "cannot read \"" + path + "\": " + std::strerror(error));
}

// Closes the descriptor on every path out (named apart from process.cpp's Fd for unity builds).
struct ClosingFd {
  int fd;
  ~ClosingFd() {
    if (fd >= 0) ::close(fd);
  }
};

core::Error tooLarge(const std::string& path, std::size_t maxBytes) {
  return core::makeError(core::ErrorKind::InvalidInput,
                         "cannot read \"" + path + "\": larger than " + std::to_string(maxBytes) + " bytes");
}

}  // namespace

core::Result<std::string> readFile(const std::string& path, std::size_t maxBytes) {
  ClosingFd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return fileError(errno, path);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return fileError(errno, path);
  // A directory opens, and only read() would say EISDIR: say it plainly.
  if (S_ISDIR(info.st_mode)) return fileError(EISDIR, path);
  std::string contents;
  if (S_ISREG(info.st_mode) && info.st_size > 0) {
    if (static_cast<std::uintmax_t>(info.st_size) > maxBytes) return tooLarge(path, maxBytes);
    contents.reserve(static_cast<std::size_t>(info.st_size));
  }
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n > 0) {
      // A device or pipe has no size to judge by; a file may also grow while it is read.
      if (contents.size() + static_cast<std::size_t>(n) > maxBytes) return tooLarge(path, maxBytes);
      contents.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return contents;
    } else if (errno != EINTR) {
      return fileError(errno, path);
    }
  }
}

}  // namespace restarter::kube
