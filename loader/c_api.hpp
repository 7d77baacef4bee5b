// Internal hooks of the C ABI layer, for the unit tests and the hkb tool.
#pragma once

#include "library.hpp"

#include <memory>

namespace hkb::detail {

// The library behind the C ABI, created on first use from the platform runtime, the embedded
// manifest and the default code object source.
Status current_library(Library** out);
// Replaces the library behind the C ABI (the previous one is shut down; its handles go dead).
void install_library(std::unique_ptr<Library> library);
// Parses the manifest embedded in this build.
Status embedded_manifest(Manifest* out);

}  // namespace hkb::detail
