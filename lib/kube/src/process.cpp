#include "restarter/kube/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "restarter/base/clock.hpp"

extern char** environ;

namespace restarter::kube {
namespace {

constexpr std::size_t kMaxOutputBytes = std::size_t{16} << 20;

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// posix_spawn file actions / attributes, destroyed on scope exit.
struct SpawnActions {
  posix_spawn_file_actions_t value;
  SpawnActions() { posix_spawn_file_actions_init(&value); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&value); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
};

// An executable regular file at `path`.
bool isExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The file `command` names, as exec would find it (Go's exec.LookPath, which client-go uses for
// exec plugins): a name with a slash as it is, else the first executable of that name in this
// process's PATH. Resolved before spawning so that a missing command is always a NotFound error:
// where posix_spawn cannot report a failed exec to the parent (qemu-user emulates its
// CLONE_VFORK with a fork) the child would only exit 127.
core::Result<std::string> findExecutable(const std::string& command) {
  if (command.find('/') != std::string::npos) {
    if (isExecutableFile(command)) return command;
    return core::makeError(core::ErrorKind::NotFound,
                           "cannot run \"" + command + "\": no executable file there");
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (const std::string candidate = dir + "/" + command; isExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return core::makeError(core::ErrorKind::NotFound, "cannot run \"" + command + "\": not found in PATH");
}

class SystemProcessRunner final : public ProcessRunner {
 public:
  core::Result<ProcessOutput> run(const ProcessSpec& spec) override {
    int outPipe[2];
    int errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0) return sysError("pipe");
    Fd outRead(outPipe[0]), outWrite(outPipe[1]);
    if (::pipe2(errPipe, O_CLOEXEC) != 0) return sysError("pipe");
    Fd errRead(errPipe[0]), errWrite(errPipe[1]);

    SpawnActions actions;
    posix_spawn_file_actions_adddup2(&actions.value, outWrite.get(), 1);
    if (!spec.inheritStdin) {
      posix_spawn_file_actions_addopen(&actions.value, 0, "/dev/null", O_RDONLY, 0);
      posix_spawn_file_actions_adddup2(&actions.value, errWrite.get(), 2);
    }

    std::map<std::string, std::string> envMap;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string entry(*e);
      auto eq = entry.find('=');
      if (eq != std::string::npos) envMap[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    for (const auto& [key, value] : spec.env) envMap[key] = value;
    std::vector<std::string> envStrings;
    for (const auto& [key, value] : envMap) envStrings.push_back(key + "=" + value);
    std::vector<char*> envp;
    for (auto& s : envStrings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> argStrings{spec.command};
    argStrings.insert(argStrings.end(), spec.args.begin(), spec.args.end());
    std::vector<char*> argv;
    for (auto& s : argStrings) argv.push_back(s.data());
    argv.push_back(nullptr);

    auto executable = findExecutable(spec.command);
    if (!executable) return executable.error();
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, executable->c_str(), &actions.value, nullptr, argv.data(), envp.data());
    if (rc != 0) {
      return core::makeError(rc == ENOENT ? core::ErrorKind::NotFound : core::ErrorKind::Unavailable,
                             "cannot run \"" + spec.command + "\": " + std::strerror(rc));
    }
    outWrite.reset();
    errWrite.reset();

    ProcessOutput output;
    auto deadline = base::systemClock().monotonicNow() + spec.timeout;
    bool outOpen = true;
    bool errOpen = !spec.inheritStdin;
    if (!errOpen) errRead.reset();
    bool timedOut = false;
    bool tooLarge = false;
    while (outOpen || errOpen) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - base::systemClock().monotonicNow());
      if (left.count() <= 0) {
        timedOut = true;
        break;
      }
      pollfd fds[2];
      nfds_t n = 0;
      if (outOpen) fds[n++] = {outRead.get(), POLLIN, 0};
      if (errOpen) fds[n++] = {errRead.get(), POLLIN, 0};
      int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (ready < 0 && errno != EINTR) break;
      for (nfds_t i = 0; i < n && ready > 0; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        char buffer[65536];
        ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
        bool isOut = fds[i].fd == outRead.get();
        if (got <= 0) {
          (isOut ? outOpen : errOpen) = false;
          continue;
        }
        std::string& sink = isOut ? output.out : output.err;
        sink.append(buffer, static_cast<std::size_t>(got));
        if (sink.size() > kMaxOutputBytes) tooLarge = true;
      }
      if (tooLarge) break;
    }
    if (timedOut || tooLarge) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timedOut) {
      return core::makeError(core::ErrorKind::Timeout, "\"" + spec.command + "\" did not finish within " +
                                                           std::to_string(spec.timeout.count()) + " ms");
    }
    if (tooLarge) {
      return core::makeError(core::ErrorKind::InvalidInput, "\"" + spec.command + "\" wrote more than 16 MiB");
    }
    output.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return output;
  }

 private:
  static core::Error sysError(const char* what) {
    return core::makeError(core::ErrorKind::Internal, std::string(what) + ": " + std::strerror(errno));
  }
};

}  // namespace

ProcessRunner& systemProcessRunner() {
  static SystemProcessRunner runner;
  return runner;
}

}  // namespace restarter::kube
