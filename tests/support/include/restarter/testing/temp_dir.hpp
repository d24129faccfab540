#pragma once
// A temporary directory (mkdtemp under the system's temporary directory) removed with everything
// in it at scope exit, for tests that need real files. Owned by the test that makes it; not
// thread-safe (write() from one thread at a time).

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace restarter::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "restarter-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }
  // Writes `contents` to `name` under the directory (making its parents); returns the file's path.
  std::string write(const std::string& name, const std::string& contents) const {
    std::string file = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace restarter::testing
