#include "tool_util.hpp"

#include <hkb/hkb.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

namespace hkb_tool {

std::string json_text(const nlohmann::json& j) {
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(const nlohmann::json& j) {
  std::cout << json_text(j) << "\n";
  std::cout.flush();
}

namespace {

// Matches a [...] set at pattern[p] against c; sets *end past the closing bracket. A set with
// no closing bracket is an ordinary '['.
bool match_set(std::string_view pattern, size_t p, char c, size_t* end, bool* valid) {
  size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) negate = true, ++i;
  bool hit = false;
  bool first = true;
  for (; i < pattern.size() && (first || pattern[i] != ']'); ++i, first = false) {
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hit |= pattern[i] <= c && c <= pattern[i + 2];
      i += 2;
    } else {
      hit |= pattern[i] == c;
    }
  }
  *valid = i < pattern.size();
  *end = i + 1;
  return hit != negate;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative matching with one backtrack point (the last '*'): linear in practice, never
  // exponential on patterns like "a*a*a*a*b".
  size_t p = 0, n = 0, star_p = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = p++;
      star_n = n;
      continue;
    }
    if (p < pattern.size()) {
      bool ok = false;
      size_t next = p + 1;
      if (pattern[p] == '?') {
        ok = true;
      } else if (pattern[p] == '[') {
        bool valid = false;
        size_t end = 0;
        const bool hit = match_set(pattern, p, name[n], &end, &valid);
        ok = valid ? hit : name[n] == '[';
        if (valid) next = end;
      } else {
        ok = pattern[p] == name[n];
      }
      if (ok) {
        p = next, ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p + 1;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string version_string() {
  int major = 0, minor = 0, patch = 0, abi = 0;
  hkb_version(&major, &minor, &patch, &abi);
  char line[128];
  std::snprintf(line, sizeof line, "hkb %d.%d.%d (ABI %d, %s flavour)", major, minor, patch, abi,
                hkb_platform());
  return line;
}

std::string unknown_subcommand(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  std::string names, nearest;
  size_t best = std::string::npos;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    if (name == word) return "";
    names += (names.empty() ? "" : ", ") + name;
    const size_t d = edit_distance(word, name);
    if (d < best) best = d, nearest = name;
  }
  std::string msg = "unknown command '" + word + "'";
  if (best <= 2) msg += "; did you mean '" + nearest + "'?";
  return msg + " (commands: " + names + ")";
}

}  // namespace hkb_tool
