// Shared by the CPU runtime tests: the shipped templates as CompileUnits,
// artifacts from a compiled program, and plain reference kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/compile/compile.hpp"

namespace kiln::test {

inline std::string read_template(const std::string& relative) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/templates/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct GemmTile {
  int bm, bn, bk;
};

inline Specialization gemm_spec(const GemmTile& t) {
  Specialization s;
  s.kernel = "gemm_f32";
  s.config =
      Config{{"BM", std::int64_t{t.bm}}, {"BN", std::int64_t{t.bn}}, {"BK", std::int64_t{t.bk}}};
  s.entry = "kiln_cpu::gemm_f32_tiled<" + std::to_string(t.bm) + "," + std::to_string(t.bn) + "," +
            std::to_string(t.bk) + ">";
  return s;
}

inline CompileUnit cpu_unit(const std::string& kernel, std::string source,
                            std::vector<Specialization> specs) {
  CompileUnit unit;
  unit.kernel = kernel;
  unit.source = std::move(source);
  unit.arch = "host";
  unit.format = BinaryFormat::kCpuObject;
  unit.specializations = std::move(specs);
  return unit;
}

inline CompileUnit gemm_unit(const std::vector<GemmTile>& tiles) {
  std::vector<Specialization> specs;
  for (const auto& t : tiles) specs.push_back(gemm_spec(t));
  return cpu_unit("gemm_f32", read_template("cpu/gemm_f32_tiled.cpp"), std::move(specs));
}

// The smallest kernel there is, `scale<N>` (doubles N floats), as a unit of
// one specialization in `format`: for tests of the compile and link steps
// themselves rather than of a kernel.
inline CompileUnit scale_unit(int n, BinaryFormat format) {
  Specialization s;
  s.kernel = "scale";
  s.config = Config{{"N", std::int64_t{n}}};
  s.entry = "scale<" + std::to_string(n) + ">";
  CompileUnit unit = cpu_unit("scale", R"(#include "kiln/cpu_kernel.h"
template <int N>
void scale(const kiln::cpu::BlockContext&, float* x) {
  for (int i = 0; i < N; ++i) x[i] *= 2.0f;
}
)",
                              {s});
  unit.format = format;
  return unit;
}

// Entry i of a compiled program as the artifact a cache would hand back.
inline Artifact artifact_of(const CompileUnit& unit, const CompiledProgram& program,
                            std::size_t i) {
  Artifact a;
  a.kernel = unit.kernel;
  a.config = unit.specializations.at(i).config;
  a.entry = unit.specializations.at(i).entry;
  a.lowered_name = program.lowered_names.at(i);
  a.format = program.format;
  a.arch = program.arch;
  a.binary = program.binary;
  a.group_size = unit.specializations.size();
  return a;
}

inline std::vector<float> ramp(std::size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) + offset;
  return v;
}

inline std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<float>& b,
                                         int m, int n, int k) {
  std::vector<float> c(static_cast<std::size_t>(m) * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += static_cast<double>(a[static_cast<std::size_t>(i) * k + p]) *
               b[static_cast<std::size_t>(p) * n + j];
      c[static_cast<std::size_t>(i) * n + j] = static_cast<float>(sum);
    }
  return c;
}

// Largest |x - y| / (atol + rtol * |y|); <= 1 means within tolerance.
inline double tolerance_ratio(const std::vector<float>& x, const std::vector<float>& y,
                              double atol = 1e-4, double rtol = 1e-4) {
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double r = std::abs(double{x[i]} - y[i]) / (atol + rtol * std::abs(double{y[i]}));
    if (!(r <= worst)) worst = r;  // NaN sticks
  }
  return worst;
}

}  // namespace kiln::test
