// The registry of shipped templates. Each template's text comes from
// templates/ (embedded at build time); its config space and launch rule are
// defined here, next to nothing else.
#include <map>
#include <mutex>

#include "kiln/compile/templates.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

namespace detail {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_template_files();
}

namespace {

// The headers the heavy GEMM variant adds: a realistic CCCL-using kernel,
// where the front end dominates the compile (measured ~1.3 s of ~1.8 s).
constexpr std::string_view kCcclPrelude =
    "#include <cuda/std/type_traits>\n"
    "#include <cuda/std/array>\n"
    "#include <cuda/std/tuple>\n"
    "#include <cuda/std/span>\n"
    "#define KILN_GEMM_WITH_CCCL 1\n";

std::int64_t gemm_smem_bytes(const Config& c) {
  const std::int64_t bm = c.get_int("BM"), bn = c.get_int("BN"), bk = c.get_int("BK");
  return c.get_int("STAGES") * (bm * (bk + 8) + bk * (bn + 8)) * 2;  // 2-byte elements
}

KernelTemplate gemm_template(std::string name, std::string type, std::string description,
                             bool cccl) {
  KernelTemplate t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.source = std::string(cccl ? kCcclPrelude : "") +
             std::string(embedded_template_file("cuda/gemm_mma.cu"));
  t.entry = "kiln::gemm<" + type + ",{BM},{BN},{BK},{WM},{WN},{STAGES}>";
  t.options = {"-std=c++17"};
  t.space.param("BM", {64, 128})
      .param("BN", {64, 128})
      .param("BK", {32, 64})
      .param("WM", {32, 64})
      .param("WN", {32, 64})
      .param("STAGES", {2, 3, 4});
  // Four warps a block: 128 threads keep two blocks resident on every SM
  // generation the template targets, and the cp.async chunks divide evenly.
  t.space.constraint("warps==4", [](const Config& c) {
    return (c.get_int("BM") / c.get_int("WM")) * (c.get_int("BN") / c.get_int("WN")) == 4;
  });
  // 64 KiB of shared memory leaves room for two blocks per SM on sm_80 and
  // sm_90 (164 / 228 KiB).
  t.space.constraint("smem<=64KiB",
                     [](const Config& c) { return gemm_smem_bytes(c) <= 64 * 1024; });
  t.space.default_config(Config{{"BM", std::int64_t{128}},
                                {"BN", std::int64_t{128}},
                                {"BK", std::int64_t{32}},
                                {"WM", std::int64_t{64}},
                                {"WN", std::int64_t{64}},
                                {"STAGES", std::int64_t{3}}});
  (void)t.check();  // a broken shipped template is a build bug: fail loudly
  return t;
}

struct Registry {
  std::vector<std::string> names;
  std::map<std::string, KernelTemplate, std::less<>> templates;
};

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    auto add = [&](KernelTemplate t) {
      reg.names.push_back(t.name);
      reg.templates.emplace(t.name, std::move(t));
    };
    add(gemm_template("gemm_f16", "__half",
                      "tensor-core GEMM, fp16 in, fp32 accumulate (mma.sync, cp.async pipeline)",
                      false));
    add(gemm_template("gemm_bf16", "__nv_bfloat16",
                      "tensor-core GEMM, bf16 in, fp32 accumulate (mma.sync, cp.async pipeline)",
                      false));
    add(gemm_template("gemm_f16_cccl", "__half",
                      "gemm_f16 including CCCL headers (<cuda/std/...>): a front-end-heavy "
                      "variant for the compile benchmark",
                      true));
    return reg;
  }();
  return r;
}

}  // namespace

std::vector<std::string> shipped_template_names() {
  return registry().names;
}

const KernelTemplate& shipped_template(std::string_view name) {
  const auto& reg = registry();
  auto it = reg.templates.find(name);
  if (it == reg.templates.end()) {
    std::string names;
    for (const auto& n : reg.names) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorCode::kNotFound,
                "no shipped kernel template '" + std::string(name) + "': choose one of " + names);
  }
  return it->second;
}

std::string_view embedded_template_file(std::string_view path) {
  for (const auto& [p, text] : detail::embedded_template_files()) {
    if (p == path) return text;
  }
  std::string paths;
  for (const auto& p : embedded_template_paths()) paths += (paths.empty() ? "" : ", ") + p;
  throw Error(ErrorCode::kNotFound,
              "no embedded template file '" + std::string(path) + "' (embedded: " + paths + ")");
}

int gemm_threads(const Config& config) {
  return static_cast<int>((config.get_int("BM") / config.get_int("WM")) *
                          (config.get_int("BN") / config.get_int("WN")) * 32);
}

std::size_t gemm_shared_bytes(const Config& config) {
  return static_cast<std::size_t>(gemm_smem_bytes(config));
}

std::vector<std::string> embedded_template_paths() {
  std::vector<std::string> out;
  for (const auto& [p, text] : detail::embedded_template_files()) out.emplace_back(p);
  return out;
}

}  // namespace kiln
