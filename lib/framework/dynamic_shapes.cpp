// Buckets, profiles and the inputs generated for each profile.
#include "kiln/framework/dynamic_shapes.hpp"

#include <algorithm>
#include <cstring>
#include <random>

#include "kiln/core/error.hpp"
#include "kiln/tuner/compare.hpp"

namespace kiln {

DynamicDim DynamicDim::of(std::size_t input, std::size_t dim, std::vector<std::int64_t> buckets) {
  DynamicDim d;
  d.input = input;
  d.dim = dim;
  d.buckets = std::move(buckets);
  return d;
}

void TuningSpec::finalize() {
  if (finalized_) return;
  if (dynamic.size() > 8) {
    throw Error(ErrorCode::kInvalidArgument,
                std::to_string(dynamic.size()) +
                    " dynamic dims: at most 8 (their product of buckets could not be tuned); "
                    "make the others constraints");
  }
  for (std::size_t i = 0; i < dynamic.size(); ++i) {
    auto& b = dynamic[i].buckets;
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (max_bucket > 0) {
      // The cap itself is a bucket when any larger size was asked for, so
      // the largest calls are tuned at the cap rather than far below it.
      bool above = !b.empty() && b.back() > max_bucket;
      b.erase(std::remove_if(b.begin(), b.end(), [&](auto v) { return v > max_bucket; }), b.end());
      if (above && (b.empty() || b.back() != max_bucket)) b.push_back(max_bucket);
    }
    if (b.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "dynamic dim " + std::to_string(i) + " (input " +
                      std::to_string(dynamic[i].input) + ", dim " + std::to_string(dynamic[i].dim) +
                      ") has no buckets: give it a generator such as power_of_two_buckets");
    }
  }
  for (const auto& c : constraints) {
    if (!c.infer) {
      throw Error(ErrorCode::kInvalidArgument, "constraint on input " + std::to_string(c.input) +
                                                   " dim " + std::to_string(c.dim) +
                                                   " has no infer function");
    }
  }
  finalized_ = true;
}

namespace {

const TensorArg& tensor_at(const ArgList& inputs, std::size_t index, std::size_t dim) {
  if (index >= inputs.size() || !inputs[index].is_tensor ||
      dim >= inputs[index].tensor.shape.size()) {
    throw Error(ErrorCode::kInvalidArgument,
                "tuning spec names input " + std::to_string(index) + " dim " + std::to_string(dim) +
                    ", which the call does not have (" + std::to_string(inputs.size()) +
                    " inputs): fix the spec's indices");
  }
  return inputs[index].tensor;
}

// A constraint's dim, checked as a dynamic dim's is, on every call: a
// constraint naming an input the call lacks was otherwise never applied
// (shape_under sets only the inputs that exist), and the spec silently
// tuned shapes its author did not describe.
void check_constraint(const ArgList& inputs, std::size_t i, const DimConstraint& c) {
  std::string lacks;
  if (c.input >= inputs.size()) {
    lacks = "the call has " + std::to_string(inputs.size()) + " inputs";
  } else if (!inputs[c.input].is_tensor) {
    lacks = "input " + std::to_string(c.input) + " is not a tensor";
  } else if (c.dim >= inputs[c.input].tensor.shape.size()) {
    lacks = "input " + std::to_string(c.input) + " has " +
            std::to_string(inputs[c.input].tensor.shape.size()) + " dims";
  } else {
    return;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "tuning spec constraint " + std::to_string(i) + " names input " +
                  std::to_string(c.input) + " dim " + std::to_string(c.dim) + ", but " + lacks +
                  ": fix the constraint's indices (inputs count from 0)");
}

}  // namespace

std::int64_t TuningSpec::bucket_of(std::size_t i, std::int64_t size) const {
  return dynamic[i].representative(size);
}

void TuningSpec::profile_into(const ArgList& inputs, std::span<std::int64_t> out) const {
  for (std::size_t i = 0; i < dynamic.size(); ++i) {
    out[i] =
        bucket_of(i, tensor_at(inputs, dynamic[i].input, dynamic[i].dim).shape[dynamic[i].dim]);
  }
  for (std::size_t i = 0; i < constraints.size(); ++i) check_constraint(inputs, i, constraints[i]);
}

std::vector<std::int64_t> TuningSpec::profile_of(const ArgList& inputs) const {
  std::vector<std::int64_t> p(dynamic.size());
  profile_into(inputs, p);
  return p;
}

std::vector<std::vector<std::int64_t>> TuningSpec::profiles() const {
  std::vector<std::vector<std::int64_t>> out(1);
  for (const auto& d : dynamic) {
    std::vector<std::vector<std::int64_t>> next;
    for (const auto& prefix : out) {
      for (std::int64_t b : d.buckets) {
        next.push_back(prefix);
        next.back().push_back(b);
      }
    }
    out = std::move(next);
  }
  return out;
}

std::vector<std::int64_t> TuningSpec::shape_under(const ArgList& inputs, std::size_t index,
                                                  std::span<const std::int64_t> profile) const {
  std::vector<std::int64_t> shape = inputs.at(index).tensor.shape;
  for (std::size_t i = 0; i < dynamic.size(); ++i) {
    if (dynamic[i].input == index) {
      tensor_at(inputs, index, dynamic[i].dim);
      shape[dynamic[i].dim] = profile[i];
    }
  }
  for (const auto& c : constraints) {
    if (c.input == index) {
      tensor_at(inputs, index, c.dim);
      shape[c.dim] = c.infer(profile);
    }
  }
  return shape;
}

namespace {

bool is_floating(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}

// Floating data: uniform in [-1, 1], encoded in the tensor's dtype.
void fill_random(DType dtype, std::byte* out, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    float v = dist(rng);
    switch (dtype) {
      case DType::kF16: {
        std::uint16_t h = float_to_half(v);
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case DType::kBF16: {
        std::uint16_t h = float_to_bf16(v);
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case DType::kF64: {
        double d = v;
        std::memcpy(out + 8 * i, &d, 8);
        break;
      }
      default:
        std::memcpy(out + 4 * i, &v, 4);
    }
  }
}

}  // namespace

Result<GeneratedInputs> make_profile_inputs(const ArgList& inputs, const TuningSpec& spec,
                                            std::span<const std::int64_t> profile, Device* device) {
  GeneratedInputs gen;
  std::mt19937 rng(0x6b696c6e);  // fixed: every tuning run profiles the same data
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Arg& in = inputs[i];
    if (!in.is_tensor) {
      gen.args.push_back(in);
      continue;
    }
    TensorArg t = TensorArg::contiguous(in.tensor.dtype, spec.shape_under(inputs, i, profile),
                                        in.tensor.device);
    std::size_t count = static_cast<std::size_t>(t.numel());
    std::size_t bytes = count * dtype_size(t.dtype);
    std::vector<std::byte> host(bytes);
    if (is_floating(t.dtype)) {
      fill_random(t.dtype, host.data(), count, rng);
    } else if (bytes > 0) {
      // Indices, token ids, lengths: the call's own values repeated, so an
      // index stays inside whatever it indexes.
      std::vector<std::byte> src(in.storage_bytes());
      if (!src.empty()) {
        if (device) {
          Status st = device->copy_to_host(src.data(), in.data, src.size());
          if (!st.ok()) return st.error();
        } else {
          std::memcpy(src.data(), in.data, src.size());
        }
        for (std::size_t off = 0; off < bytes; off += src.size()) {
          std::memcpy(host.data() + off, src.data(), std::min(src.size(), bytes - off));
        }
      }
    }
    void* data = nullptr;
    if (device) {
      auto buf = device->allocate(std::max<std::size_t>(bytes, 1));
      if (!buf.ok()) return buf.error();
      Status st = device->copy_to_device(buf->data(), host.data(), bytes);
      if (!st.ok()) return st.error();
      data = buf->data();
      gen.buffers.push_back(std::move(*buf));
    } else {
      gen.host.push_back(std::move(host));
      data = gen.host.back().data();
    }
    gen.args.push_back(Arg::of_tensor(in.name, data, std::move(t)));
    gen.args.back().in_key = in.in_key;
  }
  if (spec.pre_hook) spec.pre_hook(gen.args);
  return gen;
}

}  // namespace kiln
