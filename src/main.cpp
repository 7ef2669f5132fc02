// Command-line dispatch: `tollgate serve [--config FILE]` and `tollgate check-config FILE`.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "api/gateway.hpp"
#include "config/config.hpp"

namespace {

constexpr std::string_view kUsage =
    "usage:\n"
    "  tollgate serve [--config FILE]   run the gateway (embedded default without --config)\n"
    "  tollgate check-config FILE       validate a configuration file\n";

int usage() {
  std::fputs(kUsage.data(), stderr);
  return 2;
}

int serve(int argc, char** argv) {
  tollgate::config::Config config;
  try {
    if (argc == 4 && std::string_view(argv[2]) == "--config") {
      config = tollgate::config::loadConfigFile(argv[3]);
    } else if (argc == 2) {
      config = tollgate::config::defaultConfig();
    } else {
      return usage();
    }
  } catch (const tollgate::config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return tollgate::api::runGateway(config);
}

int checkConfig(int argc, char** argv) {
  if (argc != 3) {
    return usage();
  }
  try {
    tollgate::config::loadConfigFile(argv[2]);
  } catch (const tollgate::config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::puts("ok");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return usage();
  }
  const std::string_view command = argv[1];
  try {
    if (command == "serve") {
      return serve(argc, argv);
    }
    if (command == "check-config") {
      return checkConfig(argc, argv);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
    return 1;
  }
  return usage();
}
