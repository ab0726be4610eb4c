#include "host_args.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "kiln/core/error.hpp"

namespace kiln::internal {

namespace {

[[noreturn]] void corrupt(const std::string& what) {
  throw Error(ErrorCode::kCorrupt, "benchmark call arguments: " + what);
}

ErrorInfo corrupt_error(const std::string& what) {
  return make_error(ErrorCode::kCorrupt, "benchmark call arguments: " + what);
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
    using T = std::variant_alternative_t<I, ScalarValue>;
    if constexpr (std::is_same_v<T, bool>) {
      // A bool's byte must be 0 or 1: any other (a corrupt message) would be
      // an invalid bool once copied into one.
      unsigned char byte = 0;
      std::memcpy(&byte, &bits, 1);
      if (byte > 1) corrupt("a bool scalar holds the byte " + std::to_string(byte));
      return byte == 1;
    } else {
      T x;
      std::memcpy(&x, &bits, sizeof x);
      return x;
    }
  }
}

}  // namespace

namespace {

// Each span starts on its own cache line (and a vector's alignment) in the
// shared memory: replicas are copied from it, and a copy from an aligned
// source is the fast one.
constexpr std::size_t kSpanAlign = 64;

std::size_t align_up(std::size_t n) {
  return (n + kSpanAlign - 1) / kSpanAlign * kSpanAlign;
}

}  // namespace

Result<HostArgs> HostArgs::capture(Device& device, const ArgList& args) {
  HostArgs h;
  h.args_ = args;
  h.spans_.resize(args.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    h.spans_[i] = {total, args[i].storage_bytes()};
    total = align_up(total + h.spans_[i].size);
  }
  // A replica gets its own copy of what has storage; a raw pointer of
  // unknown extent (threads only: can_travel) stays the caller's.
  if (total == 0) {
    for (auto& a : h.args_) {
      if (a.has_storage()) a.set_address(nullptr);
    }
    return h;
  }
  auto memory = SharedMemory::create(total, "kiln-call-arguments");
  if (!memory.ok()) return memory.error();
  for (std::size_t i = 0; i < args.size(); ++i) {
    Arg& a = h.args_[i];
    if (h.spans_[i].size > 0) {
      Status st =
          device.copy_to_host(memory->data() + h.spans_[i].offset, a.address(), h.spans_[i].size);
      if (!st.ok()) return st.error();
    }
    if (a.has_storage()) a.set_address(nullptr);
  }
  // Every copy has landed before the writable view goes.
  Status st = device.synchronize();
  if (st.ok()) st = memory->seal();
  if (!st.ok()) return st.error();
  h.memory_ = std::make_shared<const SharedMemory>(std::move(*memory));
  return h;
}

std::string_view HostArgs::bytes(std::size_t i) const {
  const Span& span = spans_.at(i);
  if (span.size == 0) return {};
  return std::string_view(memory_->data() + span.offset, span.size);
}

Status can_travel(const ArgList& args) {
  for (const auto& a : args) {
    if (!a.is_pointer() || a.extent || a.address() == nullptr) continue;
    return make_error(
        ErrorCode::kInvalidArgument,
        "argument '" + a.name +
            "' is a raw pointer of unknown size, so it cannot be copied to a benchmark worker "
            "process (where a config that crashes or hangs costs only its worker): give its size "
            "(Arg::of_pointer(\"" +
            a.name +
            "\", address, bytes)) or pass it as a tensor; to benchmark in threads of this process "
            "instead, where a crashing config ends the process, ask for Isolation::kThread",
        {{"argument", a.name}});
  }
  return ok_status();
}

nlohmann::json HostArgs::to_json(worker::Payload* message) const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Arg& a = args_[i];
    nlohmann::json j = {{"name", a.name}, {"tensor", a.is_tensor}, {"in_key", a.in_key}};
    if (a.is_tensor) {
      j["dtype"] = dtype_name(a.tensor.dtype);
      j["shape"] = a.tensor.shape;
      j["strides"] = a.tensor.strides;
    } else {
      auto [index, bits] = scalar_bits(a.scalar);
      j["type"] = index;
      j["bits"] = bits;
      if (a.extent) j["extent"] = *a.extent;
    }
    if (a.has_storage()) {
      j["offset"] = spans_[i].offset;
      j["bytes"] = spans_[i].size;
    }
    list.push_back(std::move(j));
  }
  nlohmann::json out = {{"list", std::move(list)}};
  if (memory_) {
    out["memory"] = {{"fd", message->fds.size()}, {"bytes", memory_->size()}};
    message->fds.push_back(memory_->fd());
  }
  return out;
}

Result<HostArgs> HostArgs::from_json(const nlohmann::json& json, const worker::Payload& message) {
  return worker::decoded("benchmark call arguments", [&]() -> Result<HostArgs> {
    HostArgs h;
    std::size_t total = 0;
    if (json.contains("memory")) {
      const auto index = worker::whole<std::size_t>(json["memory"].at("fd"));
      total = worker::whole<std::size_t>(json["memory"].at("bytes"));
      if (index >= message.fds.size()) {
        return corrupt_error("its shared memory did not come with the message (descriptor " +
                             std::to_string(index) + " of " + std::to_string(message.fds.size()) +
                             ")");
      }
      auto memory = SharedMemory::map(message.fds[index], total);
      if (!memory.ok()) return memory.error();
      h.memory_ = std::make_shared<const SharedMemory>(std::move(*memory));
    }
    const nlohmann::json& list = json.at("list");
    if (!list.is_array()) return corrupt_error("the argument list is not a list");
    for (const auto& j : list) {
      Arg a;
      a.name = j.at("name").get<std::string>();
      a.is_tensor = j.at("tensor").get<bool>();
      a.in_key = j.at("in_key").get<bool>();
      if (a.is_tensor) {
        a.tensor.dtype = parse_dtype(j.at("dtype").get<std::string>());
        a.tensor.shape = j.at("shape").get<std::vector<std::int64_t>>();
        a.tensor.strides = j.at("strides").get<std::vector<std::int64_t>>();
        a.tensor.validate(a.name);
      } else {
        a.scalar = scalar_at<0>(worker::whole<std::size_t>(j.at("type")),
                                worker::whole<std::uint64_t>(j.at("bits")));
        if (j.contains("extent")) {
          if (!a.is_pointer()) return corrupt_error("scalar '" + a.name + "' has an extent");
          a.extent = worker::whole<std::size_t>(j["extent"]);
        }
      }
      a.set_address(nullptr);  // the caller's address means nothing here
      Span span;
      if (a.has_storage()) {
        span = {worker::whole<std::size_t>(j.at("offset")),
                worker::whole<std::size_t>(j.at("bytes"))};
        if (span.offset > total || span.size > total - span.offset ||
            span.size != a.storage_bytes()) {
          return corrupt_error("argument '" + a.name + "' does not match its bytes");
        }
      }
      h.args_.push_back(std::move(a));
      h.spans_.push_back(span);
    }
    return h;
  });
}

Result<ReplicaArgs> replicate(Device& device, const HostArgs& host) {
  ReplicaArgs r;
  r.args = host.args();
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    Arg& a = r.args[i];
    if (!a.has_storage()) continue;
    const std::string_view bytes = host.bytes(i);
    auto buffer = device.allocate(bytes.size());
    if (!buffer.ok()) return buffer.error();
    if (!bytes.empty()) {
      Status st = device.copy_to_device(buffer->data(), bytes.data(), bytes.size());
      if (!st.ok()) return st.error();
    }
    a.set_address(buffer->data());
    if (a.is_tensor) a.tensor.device = device.properties().ref;
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
  const auto offset = worker::whole<std::size_t>(where.at("offset"));
  const auto count = worker::whole<std::size_t>(where.at("count"));
  if (offset > blob.size() || count > (blob.size() - offset) / sizeof(double)) {
    corrupt("a list of doubles runs past the message");
  }
  std::vector<double> out(count);
  std::memcpy(out.data(), blob.data() + offset, count * sizeof(double));
  return out;
}

}  // namespace kiln::internal
