// Where code objects come from: the copies embedded in the library (default), or files
// <dir>/<module><suffix> when HKB_BUNDLE_DIR is set (or the library was built without embedding).
#pragma once

#include "status.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hkb::detail {

struct ModuleImage {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string origin;          // for messages: "embedded affine.hsaco" or a file path
  std::vector<uint8_t> owned;  // backing storage when read from a file
};

class BundleSource {
 public:
  virtual ~BundleSource() = default;
  virtual Status read(std::string_view module, ModuleImage* out) = 0;
  virtual std::string describe() const = 0;
};

// Embedded blobs of this build (see the generated embedded_table.cpp).
struct EmbeddedBlob {
  const char* name;
  const unsigned char* begin;
  const unsigned char* end;
};
extern const EmbeddedBlob kEmbeddedModules[];
extern const size_t kEmbeddedModuleCount;
extern const EmbeddedBlob kEmbeddedManifest;
extern const char* const kBundleSuffix;      // ".hsaco", ".fatbin" or ".cpu"
extern const char* const kDefaultBundleDir;  // install location, used without embedding
// A GPU flavour's CPU modules (-DHKB_CPU_MODULES=ON): built, and embedded unless
// HKB_EMBED_BUNDLES is off.
extern const bool kCpuModulesBuilt;
extern const EmbeddedBlob kEmbeddedCpuModules[];
extern const size_t kEmbeddedCpuModuleCount;
constexpr const char* kCpuBundleSuffix = ".cpu";

// Largest code object or manifest file hkb reads (the largest bundle of every target is far
// below it); a bigger file is refused rather than read into memory.
constexpr size_t kMaxInputFileBytes = size_t{1} << 30;

// Reads a whole regular file of at most `max_bytes`. Directories, devices, FIFOs and sockets are
// refused with a message naming the file, before any byte is read.
Status read_regular_file(const std::string& path, size_t max_bytes, std::vector<uint8_t>* out);

std::unique_ptr<BundleSource> make_embedded_source();
std::unique_ptr<BundleSource> make_directory_source(std::string dir, std::string suffix);
// HKB_BUNDLE_DIR if set, else the embedded blobs, else kDefaultBundleDir.
std::unique_ptr<BundleSource> make_default_source();
// The same places for a GPU flavour's CPU modules (<module>.cpu).
std::unique_ptr<BundleSource> make_default_cpu_source();

}  // namespace hkb::detail
