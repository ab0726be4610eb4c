#include "host_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kiln/core/checked_math.hpp"
#include "kiln/core/error.hpp"
#include "kiln/tuner/compare.hpp"

namespace kiln::internal {

Result<std::vector<double>> read_tensor(Device& device, const Arg& arg) {
  std::vector<std::uint8_t> bytes(arg.storage_bytes());
  Status st = device.copy_to_host(bytes.data(), arg.data, bytes.size());
  if (!st.ok()) return st.error();
  return to_double(arg.tensor.dtype, bytes.data(), static_cast<std::size_t>(arg.tensor.numel()));
}

double round_to_storage(DType dtype, double v) {
  const float f = static_cast<float>(v);
  switch (dtype) {
    case DType::kBF16:
      return bf16_to_float(float_to_bf16(f));
    case DType::kF16:
      return half_to_float(float_to_half(f));
    default:
      return f;
  }
}

Status write_tensor(Device& device, const Arg& arg, const std::vector<double>& values) {
  Status st = ok_status();
  if (arg.tensor.dtype == DType::kF16 || arg.tensor.dtype == DType::kBF16) {
    std::vector<std::uint16_t> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float f = static_cast<float>(values[i]);
      out[i] = arg.tensor.dtype == DType::kBF16 ? float_to_bf16(f) : float_to_half(f);
    }
    st = device.copy_to_device(arg.data, out.data(), out.size() * sizeof(std::uint16_t));
  } else {
    std::vector<float> out(values.begin(), values.end());
    st = device.copy_to_device(arg.data, out.data(), out.size() * sizeof(float));
  }
  if (st.ok()) st = device.synchronize();
  return st;
}

std::int64_t int_scalar(const ArgList& args, const char* name) {
  return std::visit(
      [name](auto v) -> std::int64_t {
        using T = decltype(v);
        if constexpr (std::is_integral_v<T>) {
          if (auto n = checked_narrow<std::int64_t>(v)) return *n;
          throw Error(ErrorCode::kInvalidArgument, std::string("argument '") + name +
                                                       "' = " + std::to_string(v) +
                                                       " does not fit a 64-bit signed dimension");
        } else {
          throw Error(ErrorCode::kInvalidArgument,
                      std::string("argument '") + name + "' must be an integer dimension");
        }
      },
      find_arg(args, name).scalar);
}

Status gemm_reference(Device& device, const ArgList& args) {
  const std::int64_t m = int_scalar(args, "M"), n = int_scalar(args, "N"),
                     k = int_scalar(args, "K");
  auto a = read_tensor(device, find_arg(args, "A"));
  if (!a.ok()) return a.error();
  auto b = read_tensor(device, find_arg(args, "B"));
  if (!b.ok()) return b.error();
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  // i-k-j order: the inner loop runs along rows of B and C (cache friendly).
  for (std::int64_t i = 0; i < m; ++i) {
    double* c_row = &c[static_cast<std::size_t>(i * n)];
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const double av = (*a)[static_cast<std::size_t>(i * k + kk)];
      const double* b_row = &(*b)[static_cast<std::size_t>(kk * n)];
      for (std::int64_t j = 0; j < n; ++j) c_row[j] += av * b_row[j];
    }
  }
  return write_tensor(device, find_arg(args, "C"), c);
}

Status fused_add_rmsnorm_reference(Device& device, const ArgList& args) {
  const std::int64_t rows = int_scalar(args, "rows"), hidden = int_scalar(args, "hidden");
  const double eps = std::get<float>(find_arg(args, "eps").scalar);
  const DType dtype = find_arg(args, "x").tensor.dtype;
  auto x = read_tensor(device, find_arg(args, "x"));
  if (!x.ok()) return x.error();
  auto res = read_tensor(device, find_arg(args, "residual"));
  if (!res.ok()) return res.error();
  auto w = read_tensor(device, find_arg(args, "weight"));
  if (!w.ok()) return w.error();
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t j = 0; j < hidden; ++j) {
      const auto i = static_cast<std::size_t>(r * hidden + j);
      // The kernel stores the sum in the storage type and squares that.
      (*res)[i] = round_to_storage(dtype, (*x)[i] + (*res)[i]);
      sum += (*res)[i] * (*res)[i];
    }
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(hidden) + eps);
    for (std::int64_t j = 0; j < hidden; ++j) {
      const auto i = static_cast<std::size_t>(r * hidden + j);
      (*x)[i] = (*res)[i] * scale * (*w)[static_cast<std::size_t>(j)];
    }
  }
  Status st = write_tensor(device, find_arg(args, "residual"), *res);
  if (st.ok()) st = write_tensor(device, find_arg(args, "x"), *x);
  return st;
}

Status softmax_reference(Device& device, const ArgList& args) {
  const std::int64_t rows = int_scalar(args, "rows"), cols = int_scalar(args, "cols");
  auto x = read_tensor(device, find_arg(args, "x"));
  if (!x.ok()) return x.error();
  std::vector<double> y(x->size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = static_cast<std::size_t>(r * cols), n = static_cast<std::size_t>(cols);
    const double m = *std::max_element(x->begin() + row, x->begin() + row + n);
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += y[row + j] = std::exp((*x)[row + j] - m);
    for (std::size_t j = 0; j < n; ++j) y[row + j] /= sum;
  }
  return write_tensor(device, find_arg(args, "y"), y);
}

}  // namespace kiln::internal
