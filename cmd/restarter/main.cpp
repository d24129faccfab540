// The only main(): hands the command line to restarter::cli. Installed as `restarter` and, for
// kubectl's plugin mechanism, as `kubectl-restarter`.
#include <iostream>
#include <string>
#include <vector>

#include "restarter/cli/app.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  return restarter::cli::runApp(args, std::cout, std::cerr);
}
