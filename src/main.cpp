// Command-line dispatch: serve, admin, migrate and check-config.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/admin.hpp"
#include "cli/serve.hpp"
#include "cli/store_setup.hpp"
#include "config/config.hpp"
#include "core/build_info.hpp"
#include "store/migrations.hpp"

namespace {

using tollgate::cli::StoreSetup;

constexpr std::string_view kUsage =
    "usage:\n"
    "  tollgate serve [--config FILE] [--data-dir DIR]   run the gateway (embedded default\n"
    "                                                    without --config)\n"
    "  tollgate admin [--config FILE | --data-dir DIR] COMMAND   teams, members, invitations\n"
    "                                                    and API keys (tollgate admin for more)\n"
    "  tollgate migrate [--config FILE | --data-dir DIR]  apply the store's schema migrations\n"
    "  tollgate check-config FILE                        validate a configuration file\n"
    "  tollgate --version                                the version and the commit built\n";

int usage() {
  std::fputs(kUsage.data(), stderr);
  return 2;
}

/// The options every store-using command takes, and the words after them.
struct Invocation {
  std::optional<std::string> config_file;
  std::optional<std::string> data_dir;
  std::vector<std::string> rest;
};

std::optional<Invocation> parse(int argc, char** argv, bool options_anywhere) {
  Invocation inv;
  for (int i = 2; i < argc; ++i) {
    const std::string_view w = argv[i];
    const bool leading = inv.rest.empty() || options_anywhere;
    if (leading && (w == "--config" || w == "--data-dir")) {
      if (i + 1 >= argc) {
        return std::nullopt;
      }
      (w == "--config" ? inv.config_file : inv.data_dir) = argv[++i];
    } else {
      inv.rest.emplace_back(w);
    }
  }
  return inv;
}

/// The configuration and store of an invocation; nullopt (after saying why) when unusable.
std::optional<std::pair<tollgate::config::Config, StoreSetup>> load(const Invocation& inv) {
  try {
    tollgate::config::Config config = inv.config_file
                                          ? tollgate::config::loadConfigFile(*inv.config_file)
                                          : tollgate::config::defaultConfig();
    StoreSetup setup = tollgate::cli::resolveStore(config, inv.data_dir);
    return std::pair{std::move(config), std::move(setup)};
  } catch (const tollgate::config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
  }
  return std::nullopt;
}

int serve(int argc, char** argv) {
  const auto inv = parse(argc, argv, true);
  if (!inv || !inv->rest.empty()) {
    return usage();
  }
  const auto loaded = load(*inv);
  return loaded ? tollgate::cli::serve(loaded->first, loaded->second) : 1;
}

int admin(int argc, char** argv) {
  const auto inv = parse(argc, argv, false);
  if (!inv) {
    return usage();
  }
  const auto loaded = load(*inv);
  return loaded ? tollgate::cli::runAdmin(inv->rest, loaded->first, loaded->second) : 1;
}

int migrate(int argc, char** argv) {
  const auto inv = parse(argc, argv, true);
  if (!inv || !inv->rest.empty()) {
    return usage();
  }
  const auto loaded = load(*inv);
  if (!loaded) {
    return 1;
  }
  try {
    const auto c = tollgate::store::connect(loaded->second.location);
    const auto report = tollgate::store::migrate(*c);
    std::printf("schema at version %lld (was %lld)\n", static_cast<long long>(report.to),
                static_cast<long long>(report.from));
    if (!report.look_alikes.empty()) {
      std::printf("names that look like an earlier one (kept; a new name like them is refused):\n");
    }
    for (const std::string& line : report.look_alikes) {
      std::printf("  %s\n", line.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate migrate: %s\n", e.what());
    return 1;
  }
  return 0;
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
    if (command == "admin") {
      return admin(argc, argv);
    }
    if (command == "migrate") {
      return migrate(argc, argv);
    }
    if (command == "check-config") {
      return checkConfig(argc, argv);
    }
    if (command == "--version" && argc == 2) {
      const std::string_view version = tollgate::build::version();
      const std::string_view commit = tollgate::build::commit();
      std::printf("tollgate %.*s (%.*s)\n", static_cast<int>(version.size()), version.data(),
                  static_cast<int>(commit.size()), commit.data());
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
    return 1;
  }
  return usage();
}
