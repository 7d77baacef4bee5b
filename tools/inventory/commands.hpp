// Registers the inventory subcommands `check`, `report` and `info` on the hkb tool's CLI11 app.
// A failing subcommand ends the program with status 1 (kExitFailed) through CLI::RuntimeError.
#pragma once

#include <CLI/CLI.hpp>

namespace hkb_tool {

void add_inventory_commands(CLI::App& app);

}  // namespace hkb_tool
