#include "gemm_shape.hpp"

#include <algorithm>

#include "option_checks.hpp"

namespace kiln::tool {
namespace {

// Digits only, 1 to kMaxBenchSize: strtol took a leading space or sign
// (" 8", "+8") that it refused after the number.
bool parse_extent(const std::string& text, int* out) {
  const bool digits = !text.empty() && text.size() <= 18 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const long v = digits ? std::stol(text) : 0;
  if (v < 1 || v > kMaxBenchSize) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

std::string GemmShape::label() const {
  if (square()) return std::to_string(m);
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string GemmShape::dims() const {
  return "M=" + std::to_string(m) + ",N=" + std::to_string(n) + ",K=" + std::to_string(k);
}

Result<std::vector<GemmShape>> parse_gemm_shapes(const std::string& text) {
  const std::string example = " (e.g. --sizes 512,1024,2048,16x4096x4096)";
  if (text.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "--sizes is empty: give M=N=K sizes or MxNxK shapes" + example);
  }
  std::vector<GemmShape> out;
  // getline dropped an empty last item ("512," ran as 512): split by hand.
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    GemmShape s;
    const std::size_t x1 = item.find('x');
    bool ok = false;
    if (x1 == std::string::npos) {
      ok = parse_extent(item, &s.m);
      s.n = s.k = s.m;
    } else {
      const std::size_t x2 = item.find('x', x1 + 1);
      ok = x2 != std::string::npos && parse_extent(item.substr(0, x1), &s.m) &&
           parse_extent(item.substr(x1 + 1, x2 - x1 - 1), &s.n) &&
           parse_extent(item.substr(x2 + 1), &s.k);
    }
    if (!ok) {
      return make_error(ErrorCode::kInvalidArgument,
                        "--sizes: '" + item + "' is neither a size nor an MxNxK shape of numbers " +
                            "from 1 to " + std::to_string(kMaxBenchSize) + example);
    }
    if (std::find(out.begin(), out.end(), s) != out.end()) {
      return make_error(ErrorCode::kInvalidArgument, "--sizes: " + item + " is given twice in '" +
                                                         text + "': name each size once");
    }
    out.push_back(s);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace kiln::tool
