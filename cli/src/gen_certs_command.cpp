#include "restarter/cli/gen_certs.hpp"

#include <ostream>
#include <system_error>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "command_flags.hpp"
#include "restarter/base/clock.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/certs/secret_data.hpp"
#include "restarter/cli/files.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/mwc_flags.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/core/rotation.hpp"
#include "restarter/kube/config.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace gen_certs {
namespace {

constexpr const char* kName = "gen-certs";

// gen-certs' flags, bound to `out` (whose values are the defaults), with the rules that need
// several of them.
FlagTable flagTable(GenCertsOptions& out) {
  FlagTable table;
  table
      .parsed<std::filesystem::path>(
          {"out-dir", "directory to write the files to (created if missing)", "DIR"}, out.outDir,
          [](const std::string& text) -> core::Result<std::filesystem::path> {
            if (text.empty()) return core::makeError(core::ErrorKind::InvalidInput, "empty");
            return std::filesystem::path(text);
          },
          [](const std::filesystem::path& path) { return path.string(); })
      .text({"service", "webhook Service name, for the default DNS names", "NAME"}, out.service)
      .text({"cluster-domain", "cluster DNS domain, for the default DNS names", "DOMAIN"}, out.clusterDomain)
      .list({"dns",
             "DNS name for the certificate (repeatable); replaces the defaults <svc>, <svc>.<ns>, "
             "<svc>.<ns>.svc, <svc>.<ns>.svc.<domain>",
             "NAME"},
            out.serving.dnsNames)
      .list(
          {"ip", "IP address for the certificate (repeatable), e.g. 127.0.0.1 for a webhook registered by URL",
           "ADDR"},
          out.serving.ipAddresses)
      .duration({"validity", "serving certificate lifetime, in whole seconds (e.g. 8760h, 30d)", "DURATION"},
                kPositiveDuration, out.serving.validity)
      .duration({"ca-validity", "CA lifetime, in whole seconds (e.g. 87600h)", "DURATION"}, kPositiveDuration,
                out.ca.validity)
      .parsed<certs::KeyType>({"key-type", "ecdsa-p256, ecdsa-p384, rsa-2048 or rsa-4096", "TYPE"},
                              out.serving.keyType, certs::parseKeyType, certs::keyTypeName)
      .toggle({"force", "overwrite existing files", ""}, out.force)
      .toggle({"print-ca-bundle", "print ca.crt base64-encoded (the caBundle value) on stdout", ""},
              out.printCaBundle)
      .text({"secret", "store ca.crt, tls.crt and tls.key in this kubernetes.io/tls Secret instead of files",
             "NAME"},
            out.secretName)
      .text({"secret-namespace", "namespace of --secret (default: --service-namespace)", "NS"},
            out.secretNamespace);
  addServiceNamespaceFlag(table, out.serviceNamespace, "webhook Service namespace, for the default DNS names");
  // Used only with --secret.
  addConnectionFlags(table, out.kubeconfig, out.context);
  table
      .rule([&out](const FlagTable&) {
        if (out.secretName.empty() &&
            (!out.secretNamespace.empty() || !out.kubeconfig.empty() || !out.context.empty())) {
          return flagProblem("--secret-namespace, --kubeconfig and --context need --secret");
        }
        return core::okStatus();
      })
      .rule([&out](const FlagTable& flags) {
        if (!out.secretName.empty() && flags.given("out-dir"))
          return flagProblem("--out-dir and --secret exclude each other");
        return core::okStatus();
      })
      .rule([&out](const FlagTable&) {
        const std::vector<std::string> problems = core::checkIssueTimings(
            out.serving.validity, out.ca.validity, {.validity = "--validity", .caValidity = "--ca-validity"});
        if (!problems.empty()) return flagProblem(joinProblems(problems));
        return core::okStatus();
      });
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(io.programName + " " + kName,
                           "Create a CA and a webhook serving certificate signed by it, and write "
                           "ca.crt, tls.crt and\ntls.key (mode 0600). The CA key is not kept: to "
                           "renew, run again with --force and publish\nthe new ca.crt as the "
                           "caBundle (install-mwc). Informational lines go to stderr.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<GenCertsOptions> kFlags{kName, flagTable, makeOptions};

}  // namespace
}  // namespace gen_certs

namespace gen_certs {
namespace {

struct Generated {
  certs::KeyedCertificate ca;
  certs::KeyedCertificate leaf;
};

core::Result<Generated> generate(const GenCertsOptions& options, core::TimePoint now) {
  certs::CaRequest caRequest = options.ca;
  caRequest.keyType = options.serving.keyType;
  auto ca = certs::createCa(caRequest, now);
  if (!ca) return std::move(ca).error();
  certs::ServingRequest serving = options.serving;
  if (serving.dnsNames.empty())
    serving.dnsNames = certs::serviceDnsNames(options.service, options.serviceNamespace, options.clusterDomain);
  auto leaf = certs::issueServing(serving, *ca, now);
  if (!leaf) return std::move(leaf).error();
  return Generated{std::move(ca).value(), std::move(leaf).value()};
}

void describeServing(const std::string& certPem, Io& io) {
  const auto info = certs::inspect(certPem);
  if (!info) return;
  const certs::CertificateInfo& c = info->front();
  io.err << "serving certificate: " << c.subject << ", valid until " << base::formatRfc3339(c.notAfter)
         << ", DNS";
  for (const auto& dns : c.dnsNames) io.err << " " << dns;
  if (!c.ipAddresses.empty()) {
    io.err << ", IP";
    for (const auto& ip : c.ipAddresses) io.err << " " << ip;
  }
  io.err << "\n";
}

}  // namespace
}  // namespace gen_certs

int runGenCertsToSecret(const GenCertsOptions& options, Io& io, core::TimePoint now, kube::Client& client) {
  const std::string prefix = io.programName + " " + gen_certs::kName + ": ";
  const std::string ns = options.secretNamespace.empty() ? options.serviceNamespace : options.secretNamespace;
  const std::string where = "Secret " + ns + "/" + options.secretName;
  const auto secrets = kube::resources::secrets();
  // Refuse early, before generating anything, when the Secret is there and --force is not given.
  auto existing = client.get(secrets, ns, options.secretName, kube::GetOptions{/*metadataOnly=*/true});
  if (existing && !options.force) {
    io.err << prefix << "refusing to overwrite " << where << " (use --force)\n";
    return kExitFailure;
  }
  if (!existing && existing.error().kind != core::ErrorKind::NotFound) {
    io.err << prefix << existing.error().describe() << "\n";
    return kExitFailure;
  }
  auto generated = gen_certs::generate(options, now);
  if (!generated) {
    io.err << prefix << generated.error().describe() << "\n";
    return kExitFailure;
  }
  nlohmann::json secret = {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", options.secretName},
        {"namespace", ns},
        {"labels", {{"app.kubernetes.io/name", "restarter"}}}}},
      // kubernetes.io/tls: tls.crt and tls.key are checked by the apiserver and the Secret mounts
      // as a --cert-dir directly; ca.crt is the conventional extra key.
      {"type", "kubernetes.io/tls"},
      {"data", certs::encodeSecretData({{certs::kCaCertKey, generated->ca.certPem},
                                        {certs::kLeafCertKey, generated->leaf.certPem},
                                        {certs::kLeafKeyKey, generated->leaf.keyPem}})}};
  core::Result<nlohmann::json> written = existing
      ? [&] {
          secret["metadata"]["resourceVersion"] = existing->value("/metadata/resourceVersion"_json_pointer, std::string());
          return client.replace(secrets, ns, options.secretName, secret);
        }()
      : client.create(secrets, ns, secret);
  if (!written) {
    const bool raced = written.error().kind == core::ErrorKind::AlreadyExists ||
                       written.error().kind == core::ErrorKind::Conflict;
    io.err << prefix << (raced ? where + " changed meanwhile; nothing written: " : std::string())
           << written.error().describe() << "\n";
    return kExitFailure;
  }
  io.err << "wrote " << where << "\n";
  gen_certs::describeServing(generated->leaf.certPem, io);
  if (options.printCaBundle) io.out << core::base64Encode(generated->ca.certPem) << "\n";
  return kExitOk;
}

int runGenCerts(const GenCertsOptions& options, Io& io, core::TimePoint now) {
  const std::string prefix = io.programName + " " + gen_certs::kName + ": ";
  std::error_code ec;
  std::filesystem::create_directories(options.outDir, ec);
  if (ec) {
    io.err << prefix << "cannot create " << options.outDir.string() << ": " << ec.message() << "\n";
    return kExitFailure;
  }
  const std::filesystem::path caPath = options.outDir / "ca.crt";
  const std::filesystem::path certPath = options.outDir / "tls.crt";
  const std::filesystem::path keyPath = options.outDir / "tls.key";
  if (!options.force) {
    std::string existing;
    for (const auto& path : {caPath, certPath, keyPath}) {
      if (std::filesystem::exists(path, ec)) existing += (existing.empty() ? "" : ", ") + path.string();
    }
    if (!existing.empty()) {
      io.err << prefix << "refusing to overwrite " << existing << " (use --force)\n";
      return kExitFailure;
    }
  }

  auto generated = gen_certs::generate(options, now);
  if (!generated) {
    io.err << prefix << generated.error().describe() << "\n";
    return kExitFailure;
  }
  const certs::KeyedCertificate* ca = &generated->ca;
  const certs::KeyedCertificate* leaf = &generated->leaf;
  // The key first: if anything fails, no certificate points at a key that is not there.
  for (const auto& [path, content, mode] :
       {std::tuple{keyPath, &leaf->keyPem, mode_t{0600}}, std::tuple{certPath, &leaf->certPem, mode_t{0644}},
        std::tuple{caPath, &ca->certPem, mode_t{0644}}}) {
    if (core::Status s = writeFileAtomically(path, *content, mode); !s) {
      io.err << prefix << s.error().describe() << "\n";
      return kExitFailure;
    }
  }
  io.err << "wrote " << caPath.string() << ", " << certPath.string() << ", " << keyPath.string() << "\n";
  gen_certs::describeServing(leaf->certPem, io);
  if (options.printCaBundle) io.out << core::base64Encode(ca->certPem) << "\n";
  return kExitOk;
}

Subcommand genCertsCommand() {
  return Subcommand{
      gen_certs::kName, "create a CA and a serving certificate for the webhook (manual bootstrap)",
      [](const std::vector<std::string>& args, Io& io) {
        GenCertsOptions genOptions;
        if (auto exit = gen_certs::kFlags.parse(args, io, genOptions).flags.exitNow) return *exit;
        const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(base::systemClock().wallNow());
        if (genOptions.secretName.empty()) return runGenCerts(genOptions, io, now);
        kube::LoadOptions load;
        load.kubeconfigPath = genOptions.kubeconfig;
        load.context = genOptions.context;
        auto client = kube::Client::connect(load);
        if (!client) {
          io.err << io.programName << " " << gen_certs::kName << ": " << client.error().describe() << "\n";
          return kExitFailure;
        }
        return runGenCertsToSecret(genOptions, io, now, **client);
      },
      [](const Io& io) { return gen_certs::kFlags.describe(io); }};
}

}  // namespace restarter::cli
