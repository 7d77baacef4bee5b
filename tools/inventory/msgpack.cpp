#include "msgpack.hpp"

#include <cstring>

namespace hkb_tool::msgpack {

namespace {

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool value(Value* out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
    uint8_t tag = 0;
    if (!byte(&tag)) return false;
    if (tag <= 0x7f) return set_uint(out, tag);
    if (tag >= 0xe0) return set_int(out, static_cast<int8_t>(tag));
    if ((tag & 0xf0) == 0x80) return map(out, tag & 0x0f, depth);
    if ((tag & 0xf0) == 0x90) return array(out, tag & 0x0f, depth);
    if ((tag & 0xe0) == 0xa0) return string(out, tag & 0x1f, Value::Type::kString);
    uint64_t n = 0;
    switch (tag) {
      case 0xc0:
        out->type = Value::Type::kNil;
        return true;
      case 0xc2:
        out->type = Value::Type::kBool, out->b = false;
        return true;
      case 0xc3:
        out->type = Value::Type::kBool, out->b = true;
        return true;
      case 0xc4:
        return uint_be(1, &n) && string(out, n, Value::Type::kBinary);
      case 0xc5:
        return uint_be(2, &n) && string(out, n, Value::Type::kBinary);
      case 0xc6:
        return uint_be(4, &n) && string(out, n, Value::Type::kBinary);
      case 0xc7:
        return uint_be(1, &n) && ext(out, n);
      case 0xc8:
        return uint_be(2, &n) && ext(out, n);
      case 0xc9:
        return uint_be(4, &n) && ext(out, n);
      case 0xca: {
        if (!uint_be(4, &n)) return false;
        const uint32_t bits = static_cast<uint32_t>(n);
        float f;
        std::memcpy(&f, &bits, 4);
        out->type = Value::Type::kFloat, out->f = f;
        return true;
      }
      case 0xcb: {
        if (!uint_be(8, &n)) return false;
        double d;
        std::memcpy(&d, &n, 8);
        out->type = Value::Type::kFloat, out->f = d;
        return true;
      }
      case 0xcc:
        return uint_be(1, &n) && set_uint(out, n);
      case 0xcd:
        return uint_be(2, &n) && set_uint(out, n);
      case 0xce:
        return uint_be(4, &n) && set_uint(out, n);
      case 0xcf:
        return uint_be(8, &n) && set_uint(out, n);
      case 0xd0:
        return uint_be(1, &n) && set_int(out, static_cast<int8_t>(n));
      case 0xd1:
        return uint_be(2, &n) && set_int(out, static_cast<int16_t>(n));
      case 0xd2:
        return uint_be(4, &n) && set_int(out, static_cast<int32_t>(n));
      case 0xd3:
        return uint_be(8, &n) && set_int(out, static_cast<int64_t>(n));
      case 0xd4:
        return ext(out, 1);
      case 0xd5:
        return ext(out, 2);
      case 0xd6:
        return ext(out, 4);
      case 0xd7:
        return ext(out, 8);
      case 0xd8:
        return ext(out, 16);
      case 0xd9:
        return uint_be(1, &n) && string(out, n, Value::Type::kString);
      case 0xda:
        return uint_be(2, &n) && string(out, n, Value::Type::kString);
      case 0xdb:
        return uint_be(4, &n) && string(out, n, Value::Type::kString);
      case 0xdc:
        return uint_be(2, &n) && array(out, n, depth);
      case 0xdd:
        return uint_be(4, &n) && array(out, n, depth);
      case 0xde:
        return uint_be(2, &n) && map(out, n, depth);
      case 0xdf:
        return uint_be(4, &n) && map(out, n, depth);
      default:
        return fail("reserved type byte 0xc1");
    }
  }

  size_t pos() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(pos_);
    return false;
  }
  bool byte(uint8_t* b) {
    if (pos_ >= size_) return fail("unexpected end of data");
    *b = data_[pos_++];
    return true;
  }
  bool uint_be(int bytes, uint64_t* out) {
    if (size_ - pos_ < static_cast<size_t>(bytes)) return fail("unexpected end of data");
    uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v = (v << 8) | data_[pos_++];
    *out = v;
    return true;
  }
  bool set_uint(Value* out, uint64_t v) {
    out->type = Value::Type::kUint, out->u = v;
    return true;
  }
  bool set_int(Value* out, int64_t v) {
    out->type = Value::Type::kInt, out->i = v;
    return true;
  }
  bool string(Value* out, uint64_t n, Value::Type type) {
    if (n > size_ - pos_)
      return fail("string of " + std::to_string(n) + " bytes runs past the end");
    out->type = type;
    out->str.assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return true;
  }
  bool ext(Value* out, uint64_t n) {
    uint8_t ext_type = 0;
    if (!byte(&ext_type)) return false;
    if (!string(out, n, Value::Type::kExt)) return false;
    out->i = static_cast<int8_t>(ext_type);
    return true;
  }
  // Every element takes at least one byte: a count larger than what is left is corrupt, and
  // checking it first keeps a forged count from reserving gigabytes.
  bool array(Value* out, uint64_t n, int depth) {
    if (n > size_ - pos_)
      return fail("array of " + std::to_string(n) + " elements runs past the end");
    out->type = Value::Type::kArray;
    out->array.resize(n);
    for (auto& v : out->array) {
      if (!value(&v, depth + 1)) return false;
    }
    return true;
  }
  bool map(Value* out, uint64_t n, int depth) {
    if (n > (size_ - pos_) / 2)
      return fail("map of " + std::to_string(n) + " entries runs past the end");
    out->type = Value::Type::kMap;
    out->map.resize(n);
    for (auto& [k, v] : out->map) {
      if (!value(&k, depth + 1) || !value(&v, depth + 1)) return false;
    }
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const Value* Value::find(std::string_view key) const {
  if (type != Type::kMap) return nullptr;
  for (const auto& [k, v] : map) {
    if (k.type == Type::kString && k.str == key) return &v;
  }
  return nullptr;
}

bool Value::as_uint(uint64_t* out) const {
  if (type == Type::kUint) return *out = u, true;
  if (type == Type::kInt && i >= 0) return *out = static_cast<uint64_t>(i), true;
  return false;
}

bool decode(const uint8_t* data, size_t size, Value* out, std::string* error) {
  Reader r(data, size);
  if (!r.value(out, 0)) {
    *error = r.error();
    return false;
  }
  if (r.pos() != size) {
    *error = std::to_string(size - r.pos()) + " unexpected bytes after the value";
    return false;
  }
  return true;
}

}  // namespace hkb_tool::msgpack
