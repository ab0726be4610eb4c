#include "host_args.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln::internal {

namespace {

[[noreturn]] void corrupt(const std::string& what) {
  throw Error(ErrorCode::kCorrupt, "benchmark call arguments: " + what);
}

// A scalar as (variant index, 64 bits of its value).
std::pair<std::size_t, std::uint64_t> scalar_bits(const ScalarValue& v) {
  std::uint64_t bits = 0;
  std::visit(
      [&](auto x) {
        static_assert(sizeof x <= sizeof bits);
        std::memcpy(&bits, &x, sizeof x);
      },
      v);
  return {v.index(), bits};
}

template <std::size_t I>
ScalarValue scalar_at(std::size_t index, std::uint64_t bits) {
  if constexpr (I == std::variant_size_v<ScalarValue>) {
    corrupt("scalar type index " + std::to_string(index) + " is unknown");
  } else {
    if (index != I) return scalar_at<I + 1>(index, bits);
    std::variant_alternative_t<I, ScalarValue> x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
  }
}

}  // namespace

Result<HostArgs> HostArgs::capture(Device& device, const ArgList& args) {
  HostArgs h;
  h.args_ = args;
  h.bytes_.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    Arg& a = h.args_[i];
    if (!a.is_tensor) continue;
    h.bytes_[i].resize(a.storage_bytes());
    if (!h.bytes_[i].empty()) {
      Status st = device.copy_to_host(h.bytes_[i].data(), a.data, h.bytes_[i].size());
      if (!st.ok()) return st.error();
    }
    a.data = nullptr;
  }
  Status st = device.synchronize();
  if (!st.ok()) return st.error();
  return h;
}

Status can_travel(const ArgList& args) {
  for (const auto& a : args) {
    if (a.is_tensor) continue;
    const void* const* p = std::get_if<void*>(&a.scalar);
    if (p && *p) {
      return make_error(
          ErrorCode::kInvalidArgument,
          "argument '" + a.name +
              "' is a raw pointer, which means nothing in another process: pass it as a tensor "
              "argument (its bytes are replicated), or benchmark in threads (Isolation::kThread)",
          {{"argument", a.name}});
    }
  }
  return ok_status();
}

nlohmann::json HostArgs::to_json(std::string* blob) const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Arg& a = args_[i];
    nlohmann::json j = {{"name", a.name}, {"tensor", a.is_tensor}, {"in_key", a.in_key}};
    if (a.is_tensor) {
      j["dtype"] = dtype_name(a.tensor.dtype);
      j["shape"] = a.tensor.shape;
      j["strides"] = a.tensor.strides;
      j["offset"] = blob->size();
      j["bytes"] = bytes_[i].size();
      blob->append(bytes_[i]);
    } else {
      auto [index, bits] = scalar_bits(a.scalar);
      j["type"] = index;
      j["bits"] = bits;
    }
    list.push_back(std::move(j));
  }
  return list;
}

HostArgs HostArgs::from_json(const nlohmann::json& json, std::string_view blob) {
  if (!json.is_array()) corrupt("not a list");
  HostArgs h;
  try {
    for (const auto& j : json) {
      Arg a;
      a.name = j.at("name").get<std::string>();
      a.is_tensor = j.at("tensor").get<bool>();
      a.in_key = j.at("in_key").get<bool>();
      std::string bytes;
      if (a.is_tensor) {
        a.tensor.dtype = parse_dtype(j.at("dtype").get<std::string>());
        a.tensor.shape = j.at("shape").get<std::vector<std::int64_t>>();
        a.tensor.strides = j.at("strides").get<std::vector<std::int64_t>>();
        a.tensor.validate(a.name);
        const auto offset = j.at("offset").get<std::size_t>();
        const auto size = j.at("bytes").get<std::size_t>();
        if (offset > blob.size() || size > blob.size() - offset || size != a.storage_bytes()) {
          corrupt("tensor '" + a.name + "' does not match its bytes");
        }
        bytes.assign(blob.substr(offset, size));
      } else {
        a.scalar = scalar_at<0>(j.at("type").get<std::size_t>(), j.at("bits").get<std::uint64_t>());
      }
      h.args_.push_back(std::move(a));
      h.bytes_.push_back(std::move(bytes));
    }
  } catch (const nlohmann::json::exception& e) {
    corrupt(e.what());
  }
  return h;
}

Result<ReplicaArgs> replicate(Device& device, const HostArgs& host) {
  ReplicaArgs r;
  r.args = host.args();
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    Arg& a = r.args[i];
    if (!a.is_tensor) continue;
    const std::string& bytes = host.bytes(i);
    auto buffer = device.allocate(bytes.size());
    if (!buffer.ok()) return buffer.error();
    if (!bytes.empty()) {
      Status st = device.copy_to_device(buffer->data(), bytes.data(), bytes.size());
      if (!st.ok()) return st.error();
    }
    a.data = buffer->data();
    a.tensor.device = device.properties().ref;
    r.buffers.push_back(std::move(*buffer));
  }
  Status st = device.synchronize();
  if (!st.ok()) return st.error();
  return r;
}

void append_doubles(const std::vector<double>& values, std::string* blob, nlohmann::json* where) {
  (*where)["offset"] = blob->size();
  (*where)["count"] = values.size();
  blob->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

std::vector<double> read_doubles(const nlohmann::json& where, std::string_view blob) {
  const auto offset = where.at("offset").get<std::size_t>();
  const auto count = where.at("count").get<std::size_t>();
  if (offset > blob.size() || count > (blob.size() - offset) / sizeof(double)) {
    corrupt("a list of doubles runs past the message");
  }
  std::vector<double> out(count);
  std::memcpy(out.data(), blob.data() + offset, count * sizeof(double));
  return out;
}

}  // namespace kiln::internal
