#include "bundle_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hkb::detail {

namespace {

class EmbeddedSource final : public BundleSource {
 public:
  EmbeddedSource(const EmbeddedBlob* blobs, size_t count, const char* suffix)
      : blobs_(blobs), count_(count), suffix_(suffix) {}
  Status read(std::string_view module, ModuleImage* out) override {
    for (size_t i = 0; i < count_; ++i) {
      const EmbeddedBlob& b = blobs_[i];
      if (module == b.name) {
        out->data = b.begin;
        out->size = static_cast<size_t>(b.end - b.begin);
        out->origin = std::string("embedded ") + b.name + suffix_;
        return Status::ok();
      }
    }
    return error(HKB_ERROR_IO, "module '" + std::string(module) + "' (" + suffix_ +
                                   ") is not embedded in this library");
  }
  std::string describe() const override { return "embedded in the library"; }

 private:
  const EmbeddedBlob* blobs_;
  size_t count_;
  const char* suffix_;
};

class DirectorySource final : public BundleSource {
 public:
  DirectorySource(std::string dir, std::string suffix)
      : dir_(std::move(dir)), suffix_(std::move(suffix)) {}
  Status read(std::string_view module, ModuleImage* out) override {
    const std::string path = dir_ + "/" + std::string(module) + suffix_;
    Status s = read_regular_file(path, kMaxInputFileBytes, &out->owned);
    if (!s) {
      s.message = "code object of module '" + std::string(module) + "': " + s.message;
      return s;
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

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

Status read_regular_file(const std::string& path, size_t max_bytes, std::vector<uint8_t>* out) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return error(HKB_ERROR_IO, path + ": cannot open: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return error(HKB_ERROR_IO, path + ": cannot stat: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return error(HKB_ERROR_IO, path + ": is " + std::string(file_kind(st.st_mode)) +
                                   ", not a code object or manifest file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return error(HKB_ERROR_IO, path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                                   std::to_string(max_bytes) + " bytes hkb reads from one file");
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return error(HKB_ERROR_IO, path + ": read error: " + std::strerror(errno));
    if (n == 0) break;  // the file shrank while being read: keep what is there
    done += static_cast<size_t>(n);
  }
  out->resize(done);
  return Status::ok();
}

std::unique_ptr<BundleSource> make_embedded_source() {
  return std::make_unique<EmbeddedSource>(kEmbeddedModules, kEmbeddedModuleCount, kBundleSuffix);
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

std::unique_ptr<BundleSource> make_default_cpu_source() {
  const char* env = std::getenv("HKB_BUNDLE_DIR");
  if (env != nullptr && *env != '\0') return make_directory_source(env, kCpuBundleSuffix);
  if (kEmbeddedCpuModuleCount > 0) {
    return std::make_unique<EmbeddedSource>(kEmbeddedCpuModules, kEmbeddedCpuModuleCount,
                                            kCpuBundleSuffix);
  }
  return make_directory_source(kDefaultBundleDir, kCpuBundleSuffix);
}

}  // namespace hkb::detail
