#include "restarter/cli/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace restarter::cli {

namespace {
core::Error ioError(const std::string& what, int err) {
  return core::makeError(core::ErrorKind::Unavailable, what + ": " + std::strerror(err));
}
}  // namespace

core::Status writeFileAtomically(const std::filesystem::path& path, std::string_view content, mode_t mode) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = mkstemp(tmpl.data());  // created 0600: a key is never readable by others
  if (fd < 0) return ioError("creating a temporary file in " + dir.string(), errno);
  auto fail = [&](const std::string& what) {
    const int err = errno;
    close(fd);
    unlink(tmpl.c_str());
    return ioError(what + " " + tmpl, err);
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("writing");
    written += static_cast<std::size_t>(n);
  }
  if (fchmod(fd, mode) != 0) return fail("setting the mode of");
  if (fsync(fd) != 0) return fail("syncing");
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmpl.c_str());
    return ioError("closing " + tmpl, err);
  }
  if (rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmpl.c_str());
    return ioError("renaming " + tmpl + " to " + path.string(), err);
  }
  return core::okStatus();
}

}  // namespace restarter::cli
