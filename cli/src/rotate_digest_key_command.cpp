// rotate-digest-key: flags, the two steps of a rotation, exit codes (see rotate_digest_key.hpp).
#include "command_flags.hpp"
#include "restarter/cli/rotate_digest_key.hpp"

#include <iostream>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "restarter/cli/digest_key_flags.hpp"
#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/core/annotations.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/kube/digest_key.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace rotate_digest_key {
namespace {

constexpr const char* kName = "rotate-digest-key";

struct RotateOptions {
  bool finish = false;
  DigestKeySecret digestKey;
  kube::LoadOptions connection;
};

FlagTable flagTable(RotateOptions& out) {
  FlagTable table;
  table.toggle({"finish",
                "end the rotation: remove the previous key once no workload's content record uses it "
                "(fails, naming them, while some do)",
                ""},
               out.finish);
  addDigestKeyFlags(table, out.digestKey, "the one serve-controller and serve-webhook use");
  addKubeFlags(table, out.connection);
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Rotate the key of content digests without restarting any workload. Without --finish: a new\n"
      "random key becomes the Secret's data.key and the current one is kept as data.previous; then\n"
      "restart serve-controller (kubectl rollout restart), which compares every record under its\n"
      "own key and rewrites it under the new one (metadata only, no restart); serve-webhook reads\n"
      "both keys within --cert-check-interval. With --finish, once no workload's record holds an\n"
      "entry under the previous key: data.previous is removed.\n\n"
      "Exit codes: 0 done; 1 the API failed, a rotation is under way already, or records still\n"
      "use the previous key; 2 bad command line; 4 access denied.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<RotateOptions> kFlags{kName, flagTable, makeOptions};

int exitFor(const core::Error& error) {
  return error.kind == core::ErrorKind::Forbidden || error.kind == core::ErrorKind::Unauthorized
             ? kExitForbidden
             : kExitFailure;
}

}  // namespace
}  // namespace rotate_digest_key

std::vector<std::string> workloadsUsingKey(const std::vector<nlohmann::json>& workloads,
                                           const std::string& kind, const std::string& keyId) {
  std::vector<std::string> out;
  for (const nlohmann::json& workload : workloads) {
    const core::ContentRecords records = core::recordedContentDigests(workload);
    for (const auto& [key, record] : records) {
      if (record.keyId != keyId) continue;
      out.push_back(kind + "/" + core::metadataString(workload, "namespace") + "/" +
                    core::metadataString(workload, "name"));
      break;
    }
  }
  return out;
}

Subcommand rotateDigestKeyCommand() {
  return Subcommand{
      rotate_digest_key::kName, "rotate the key of content digests without restarting any workload",
      [](const std::vector<std::string>& args, Io& io) {
        rotate_digest_key::RotateOptions options;
        if (auto exit = rotate_digest_key::kFlags.parse(args, io, options).flags.exitNow) return *exit;
        const std::string prefix = io.programName + " " + rotate_digest_key::kName + ": ";
        auto client = kube::Client::connect(options.connection);
        if (!client) {
          io.err << prefix << client.error().describe() << "\n";
          return kExitFailure;
        }
        const std::string& ns = options.digestKey.namespace_;
        const std::string& name = options.digestKey.name;
        if (!options.finish) {
          auto rotated = kube::rotateDigestKey(**client, ns, name);
          if (!rotated) {
            io.err << prefix << rotated.error().describe() << "\n";
            return rotate_digest_key::exitFor(rotated.error());
          }
          io.out << "rotation started: key " << rotated->id() << ", previous key " << rotated->previous()->id()
                 << " kept in secret " << ns << "/" << name << "\n"
                 << "next: restart serve-controller (kubectl -n <its namespace> rollout restart deployment "
                    "<its name>); once no record uses key "
                 << rotated->previous()->id() << ", run " << rotate_digest_key::kName << " --finish\n";
          return kExitOk;
        }
        auto key = kube::readDigestKey(**client, ns, name);
        if (!key) {
          io.err << prefix << key.error().describe() << "\n";
          return rotate_digest_key::exitFor(key.error());
        }
        if (key->previous() == nullptr) {
          io.err << prefix << "secret " << ns << "/" << name
                 << " holds no previous key: no rotation to finish\n";
          return kExitFailure;
        }
        const std::string previousId = key->previous()->id();
        std::vector<std::string> using_;
        const std::vector<std::pair<kube::ResourceRef, std::string>> kinds = {
            {kube::resources::statefulSets(), "statefulset"},
            {kube::resources::deployments(), "deployment"},
            {kube::resources::daemonSets(), "daemonset"}};
        for (const auto& [resource, kind] : kinds) {
          kube::ListOptions list;
          list.metadataOnly = true;  // the record is a metadata annotation
          auto listed = (*client)->list(resource, "", list);
          if (!listed) {
            io.err << prefix << listed.error().describe() << "\n";
            return rotate_digest_key::exitFor(listed.error());
          }
          for (std::string& found : workloadsUsingKey(listed->items, kind, previousId))
            using_.push_back(std::move(found));
        }
        if (!using_.empty()) {
          io.err << prefix << using_.size() << " workloads still have records under the previous key "
                 << previousId << " (serve-controller rewrites them; was it restarted after the rotation?):";
          for (std::size_t i = 0; i < using_.size() && i < 10; ++i)
            io.err << (i == 0 ? " " : ", ") << using_[i];
          io.err << (using_.size() > 10 ? ", ...\n" : "\n");
          return kExitFailure;
        }
        auto finished = kube::finishDigestKeyRotation(**client, ns, name, previousId);
        if (!finished) {
          io.err << prefix << finished.error().describe() << "\n";
          return rotate_digest_key::exitFor(finished.error());
        }
        io.out << "rotation finished: key " << finished->id() << ", previous key " << previousId
               << " removed from secret " << ns << "/" << name << "\n";
        return kExitOk;
      },
      [](const Io& io) { return rotate_digest_key::kFlags.describe(io); }};
}

}  // namespace restarter::cli
