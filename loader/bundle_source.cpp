#include "bundle_source.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace hkb::detail {

namespace {

class EmbeddedSource final : public BundleSource {
 public:
  Status read(std::string_view module, ModuleImage* out) override {
    for (size_t i = 0; i < kEmbeddedModuleCount; ++i) {
      const EmbeddedBlob& b = kEmbeddedModules[i];
      if (module == b.name) {
        out->data = b.begin;
        out->size = static_cast<size_t>(b.end - b.begin);
        out->origin = std::string("embedded ") + b.name + kBundleSuffix;
        return Status::ok();
      }
    }
    return error(HKB_ERROR_IO,
                 "module '" + std::string(module) + "' is not embedded in this library");
  }
  std::string describe() const override { return "embedded in the library"; }
};

class DirectorySource final : public BundleSource {
 public:
  DirectorySource(std::string dir, std::string suffix)
      : dir_(std::move(dir)), suffix_(std::move(suffix)) {}
  Status read(std::string_view module, ModuleImage* out) override {
    const std::string path = dir_ + "/" + std::string(module) + suffix_;
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) {
      return error(HKB_ERROR_IO, "cannot open code object " + path + ": " + std::strerror(errno));
    }
    const std::streamsize size = f.tellg();
    f.seekg(0);
    out->owned.resize(static_cast<size_t>(size));
    if (size > 0 && !f.read(reinterpret_cast<char*>(out->owned.data()), size)) {
      return error(HKB_ERROR_IO, "cannot read code object " + path);
    }
    out->data = out->owned.data();
    out->size = out->owned.size();
    out->origin = path;
    return Status::ok();
  }
  std::string describe() const override { return "directory " + dir_; }

 private:
  std::string dir_, suffix_;
};

}  // namespace

std::unique_ptr<BundleSource> make_embedded_source() {
  return std::make_unique<EmbeddedSource>();
}

std::unique_ptr<BundleSource> make_directory_source(std::string dir, std::string suffix) {
  return std::make_unique<DirectorySource>(std::move(dir), std::move(suffix));
}

std::unique_ptr<BundleSource> make_default_source() {
  const char* env = std::getenv("HKB_BUNDLE_DIR");
  if (env != nullptr && *env != '\0') return make_directory_source(env, kBundleSuffix);
  if (kEmbeddedModuleCount > 0) return make_embedded_source();
  return make_directory_source(kDefaultBundleDir, kBundleSuffix);
}

}  // namespace hkb::detail
