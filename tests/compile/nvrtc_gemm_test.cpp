// The shipped GEMM templates: their spaces, and real compiles of their
// default configs (fp16 and bf16 in one program each, sm_80 and sm_90a).
#include <gtest/gtest.h>

#include <tuple>
#include "cuda/nvrtc_api.hpp"
#include "kiln/backends/nvrtc.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "kiln/compile/templates.hpp"

#include "skip.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

TEST(ShippedTemplates, GemmSpacesHaveAtLeastSixteenValidConfigs) {
  for (const char* name : {"gemm_f16", "gemm_bf16", "gemm_f16_cccl"}) {
    const KernelTemplate& t = shipped_template(name);
    EXPECT_GE(t.space.size(), 16u) << name;
    EXPECT_TRUE(t.check().empty()) << name << ": every parameter is used";
    for (const Config& c : t.space.enumerate()) {
      EXPECT_EQ(gemm_threads(c), 128);
      EXPECT_LE(gemm_shared_bytes(c), 64u * 1024u);
    }
    EXPECT_LT(t.space.size(), t.space.cartesian_size()) << "constraints prune";
  }
  EXPECT_NE(shipped_template("gemm_f16_cccl").source.find("<cuda/std/"), std::string::npos);
  EXPECT_NE(embedded_template_file("cuda/gemm_mma.cu").find("mma.sync.aligned.m16n8k16"),
            std::string::npos);
}

TEST(ShippedTemplates, UnknownNameListsTheShippedOnes) {
  try {
    (void)shipped_template("gemm_f64");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("gemm_f16"), std::string::npos);
  }
}

TEST(ShippedTemplates, DefaultConfigsCompileForSm80AndSm90a) {
  if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
  auto compiler = cuda::make_compiler();
  CompileContext context{current_toolchain("cuda"), CacheEnvRegistry::global().snapshot()};
  // fp16 for sm_90a and bf16 for sm_80: both types and both arches in two programs.
  for (auto [name, arch, sm] :
       {std::tuple{"gemm_f16", "sm_90a", 90}, std::tuple{"gemm_bf16", "sm_80", 80}}) {
    const KernelTemplate& t = shipped_template(name);
    // The default and the smallest-tile config: two entries in one program.
    std::vector<Specialization> specs = {t.specialize(t.space.default_config()),
                                         t.specialize(t.space.enumerate().front())};
    {
      auto units = group(t, specs, GroupOptions{2, arch, BinaryFormat::kCubin});
      ASSERT_EQ(units.size(), 1u);
      UnitResult r = compile_isolated(*compiler, units[0], CancelToken(), context);
      ASSERT_EQ(r.ok_count(), 2u)
          << (r.entries[0].ok() ? r.entries[1] : r.entries[0]).error().describe();
      for (const auto& e : r.entries) {
        EXPECT_EQ(test::elf_info(*e->binary).sm, sm);
        EXPECT_NE(e->binary->find(e->lowered_name), std::string::npos);
        EXPECT_NE(e->lowered_name.find("gemm"), std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace kiln
