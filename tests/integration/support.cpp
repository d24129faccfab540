#include "support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

namespace restarter::integration {
namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> splitNul(const std::string& data) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : data) {
    if (c == '\0') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks) and the state letter; empty if gone.
std::pair<std::string, char> procStart(long pid) {
  std::string stat = readAll("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return {"", '?'};
  std::istringstream rest(stat.substr(close + 2));
  std::vector<std::string> fields;
  std::string field;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 20) return {"", '?'};
  return {fields[19], fields[0].empty() ? '?' : fields[0][0]};
}

std::string randomSuffix() {
  std::random_device device;
  std::mt19937 engine(device());
  const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (int i = 0; i < 6; ++i) out += alphabet[engine() % 36];
  return out;
}

}  // namespace

kube::ConnectionConfig adminConfig() {
  auto config = kube::loadConfig(kube::LoadOptions{});
  if (!config) {
    throw std::runtime_error("cannot load KUBECONFIG (run under tests/cluster/cluster.sh exec): " +
                             config.error().describe());
  }
  return std::move(config).value();
}

std::unique_ptr<kube::Client> adminClient() {
  auto client = kube::Client::create(adminConfig());
  if (!client) throw std::runtime_error(client.error().describe());
  return std::move(client).value();
}

TestNamespace::TestNamespace(kube::Client& client, const std::string& prefix)
    : client_(client), name_(prefix + "-" + randomSuffix()) {
  nlohmann::json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name_}}}};
  auto created = client_.create(kube::resources::namespaces(), "", ns);
  if (!created) throw std::runtime_error("cannot create namespace: " + created.error().describe());
}

TestNamespace::~TestNamespace() {
  kube::DeleteOptions options;
  options.propagationPolicy = "Background";
  (void)client_.remove(kube::resources::namespaces(), "", name_, options);
}

bool waitUntil(std::chrono::milliseconds timeout, const std::function<bool()>& condition,
               std::chrono::milliseconds interval) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

std::string restartApiserver(kube::Client& client, std::chrono::seconds readyTimeout) {
  const char* stateDir = std::getenv("RESTARTER_CLUSTER_STATE_DIR");
  if (stateDir == nullptr) return "RESTARTER_CLUSTER_STATE_DIR is not set (run under cluster.sh exec)";
  std::string pidFile = std::string(stateDir) + "/run/kube-apiserver.pid";
  std::istringstream record(readAll(pidFile));
  long pid = 0;
  std::string start;
  record >> pid >> start;
  if (pid <= 0 || start.empty()) return "no PID record in " + pidFile;
  if (procStart(pid).first != start) return "kube-apiserver (pid " + std::to_string(pid) + ") is not running";

  std::string proc = "/proc/" + std::to_string(pid);
  std::vector<std::string> argv = splitNul(readAll(proc + "/cmdline"));
  std::vector<std::string> envv = splitNul(readAll(proc + "/environ"));
  std::error_code ec;
  std::string cwd = std::filesystem::read_symlink(proc + "/cwd", ec).string();
  if (argv.empty() || argv[0].find("kube-apiserver") == std::string::npos)
    return "pid " + std::to_string(pid) + " is not kube-apiserver";

  ::kill(static_cast<pid_t>(pid), SIGTERM);
  // The same grace as cluster.sh down gives it (stop_components 20), then SIGKILL.
  bool gone = waitUntil(std::chrono::seconds(20), [&] {
    auto [now, state] = procStart(pid);
    return now != start || state == 'Z';
  });
  if (!gone) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    waitUntil(std::chrono::seconds(10), [&] {
      auto [now, state] = procStart(pid);
      return now != start || state == 'Z';
    });
  }

  // Start it again as cluster.sh does: own session, stdin from /dev/null, output appended to its log.
  std::string log = std::string(stateDir) + "/logs/kube-apiserver.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<char*> envs;
  for (auto& e : envv) envs.push_back(e.data());
  envs.push_back(nullptr);
  pid_t child = 0;
  int rc = ::posix_spawn(&child, args[0], &actions, &attributes, args.data(), envs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return "cannot start kube-apiserver again: " + std::string(std::strerror(rc));
  std::string childStart;
  waitUntil(
      std::chrono::seconds(5),
      [&] {
        childStart = procStart(child).first;
        return !childStart.empty();
      },
      std::chrono::milliseconds(10));
  {
    std::ofstream out(pidFile, std::ios::trunc);
    out << child << " " << childStart << "\n";
  }
  bool ready = waitUntil(
      readyTimeout,
      [&] {
        auto body = client.getRaw("/readyz");
        return body.ok() && *body == "ok";
      },
      std::chrono::milliseconds(250));
  return ready ? "" : "kube-apiserver did not become ready again (log: " + log + ")";
}

void writeFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

}  // namespace restarter::integration
