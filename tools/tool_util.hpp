// Pieces every hkb subcommand shares: exit codes, JSON output, name globs, the version line and
// the message for a mistyped subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace hkb_tool {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // a check failed, a file is bad, a name matches nothing
constexpr int kExitUsage = 2;   // unknown subcommand or option, missing argument

// Writes `j` to stdout, indented. Strings that are not UTF-8 (names read from a damaged code
// object) are written with U+FFFD in place of the bad bytes instead of aborting the dump.
void print_json(const nlohmann::json& j);
std::string json_text(const nlohmann::json& j);

// Shell-style glob on a whole name: * any run, ? one character, [abc] / [a-z] / [!a] a set.
bool glob_match(std::string_view pattern, std::string_view name);

// "hkb 0.1.0 (ABI 1, amd flavour)"
std::string version_string();

// When the first word after the program name is not a subcommand of `app`, a message naming it
// and the nearest subcommand; else "".
std::string unknown_subcommand(const CLI::App& app, int argc, const char* const* argv);

}  // namespace hkb_tool
