// The cache-invalidating environment, the toolchain fingerprint and the two
// keys built from them.
#include "kiln/core/keys.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

ToolchainFingerprint toolchain() {
  return {"0.1.0", "abc", "cuda", "nvrtc 13.0"};
}

Hash128 definition() {
  return hash128("the kernel's definition");
}

ProblemKey problem() {
  return ProblemKey("gemm").tensor("a", TensorArg::contiguous(DType::kF16, {128, 64}));
}

TEST(CacheEnv, BuiltinsAreRegistered) {
  CacheEnvRegistry r;
  auto names = r.names();
  for (const auto& n : CacheEnvRegistry::builtin_names()) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(CacheEnv, ChangingARegisteredVariableChangesEveryKey) {
  CacheEnvRegistry r;
  Environment env;
  EnvSnapshot before = r.snapshot(env);
  env.set("KILN_NVRTC_FLAGS", "-use_fast_math");
  EnvSnapshot after = r.snapshot(env);
  EXPECT_NE(before.hash(), after.hash());
  EXPECT_NE(tuning_key(problem(), "sm_90a", toolchain(), before, definition()),
            tuning_key(problem(), "sm_90a", toolchain(), after, definition()));
  EXPECT_NE(artifact_key(toolchain(), "src", {"-O3"}, "k", "sm_90a", before),
            artifact_key(toolchain(), "src", {"-O3"}, "k", "sm_90a", after));
}

TEST(CacheEnv, AnUnrelatedVariableDoesNotChangeKeys) {
  CacheEnvRegistry r;
  Environment env;
  EnvSnapshot before = r.snapshot(env);
  env.set("SOME_UNRELATED_VARIABLE", "1").set("PATH", "/elsewhere");
  EnvSnapshot after = r.snapshot(env);
  EXPECT_EQ(before, after);
  EXPECT_EQ(tuning_key(problem(), "sm_90a", toolchain(), before, definition()),
            tuning_key(problem(), "sm_90a", toolchain(), after, definition()));
}

TEST(CacheEnv, UserRegisteredVariableEntersTheKey) {
  CacheEnvRegistry r;
  Environment env;
  env.set("MY_TEMPLATE_TILE", "64");
  EnvSnapshot unregistered = r.snapshot(env);
  r.add("MY_TEMPLATE_TILE");
  r.add("MY_TEMPLATE_TILE");  // idempotent
  EnvSnapshot registered = r.snapshot(env);
  EXPECT_NE(unregistered.hash(), registered.hash());
  env.set("MY_TEMPLATE_TILE", "128");
  EXPECT_NE(registered.hash(), r.snapshot(env).hash());
  EXPECT_THROW(r.add(""), Error);
  EXPECT_THROW(r.add("A=B"), Error);
}

TEST(CacheEnv, UnsetDiffersFromEmpty) {
  CacheEnvRegistry r;
  Environment env;
  EnvSnapshot unset = r.snapshot(env);
  env.set("KILN_ARCH", "");
  EXPECT_NE(unset.hash(), r.snapshot(env).hash());
}

TEST(CacheEnv, SnapshotJsonRoundTrip) {
  CacheEnvRegistry r;
  Environment env;
  env.set("KILN_ARCH", "sm_80");
  EnvSnapshot s = r.snapshot(env);
  EXPECT_EQ(EnvSnapshot::from_json(nlohmann::json::parse(s.to_json().dump())), s);
  EXPECT_THROW(EnvSnapshot::from_json(nlohmann::json::parse("[1]")), Error);
}

TEST(Fingerprint, EveryPartChangesTheHash) {
  ToolchainFingerprint base = toolchain();
  auto changed = [&](auto mutate) {
    ToolchainFingerprint f = base;
    mutate(f);
    return f.hash() != base.hash();
  };
  EXPECT_TRUE(changed([](auto& f) { f.kiln_version = "0.2.0"; }));
  EXPECT_TRUE(changed([](auto& f) { f.backend = "cpu"; }));
  EXPECT_TRUE(changed([](auto& f) { f.compiler = "absent"; }));
  EXPECT_TRUE(changed([](auto& f) { f.codegen_hash = "abd"; }));
}

// Each backend's keys carry its own compiler alone: upgrading NVRTC leaves
// every CPU artifact and tuning key as it was, upgrading LLVM every CUDA one
// (the fingerprint of version 1 held both versions in every key).
TEST(Fingerprint, ABackendsKeysIgnoreTheOtherBackendsCompiler) {
  EnvSnapshot env = CacheEnvRegistry().snapshot(Environment());
  struct Machine {
    std::string llvm, nvrtc;
    ToolchainFingerprint cpu() const { return ToolchainFingerprint::of("cpu", llvm); }
    ToolchainFingerprint cuda() const { return ToolchainFingerprint::of("cuda", nvrtc); }
  };
  auto artifact = [&](const ToolchainFingerprint& f, const char* arch) {
    return artifact_key(f, "src", {"-O3"}, "k<1>", arch, env);
  };
  auto tuning = [&](const ToolchainFingerprint& f, const char* arch) {
    return tuning_key(problem(), arch, f, env, definition());
  };
  const Machine before{"llvm 19.1.7", "nvrtc 13.0"};
  const Machine new_nvrtc{"llvm 19.1.7", "nvrtc 13.1"};
  const Machine new_llvm{"llvm 19.1.8", "nvrtc 13.0"};
  EXPECT_EQ(artifact(before.cpu(), "host"), artifact(new_nvrtc.cpu(), "host"));
  EXPECT_EQ(tuning(before.cpu(), "host"), tuning(new_nvrtc.cpu(), "host"));
  EXPECT_NE(artifact(before.cuda(), "sm_90a"), artifact(new_nvrtc.cuda(), "sm_90a"));
  EXPECT_NE(tuning(before.cuda(), "sm_90a"), tuning(new_nvrtc.cuda(), "sm_90a"));
  EXPECT_EQ(artifact(before.cuda(), "sm_90a"), artifact(new_llvm.cuda(), "sm_90a"));
  EXPECT_EQ(tuning(before.cuda(), "sm_90a"), tuning(new_llvm.cuda(), "sm_90a"));
  EXPECT_NE(artifact(before.cpu(), "host"), artifact(new_llvm.cpu(), "host"));
  EXPECT_NE(tuning(before.cpu(), "host"), tuning(new_llvm.cpu(), "host"));
  // The two backends never share a key, even with equal compiler strings.
  EXPECT_NE(ToolchainFingerprint::of("cpu", "x").hash(),
            ToolchainFingerprint::of("cuda", "x").hash());
}

TEST(Fingerprint, JsonRoundTrip) {
  ToolchainFingerprint f = toolchain();
  nlohmann::json j = f.to_json();
  EXPECT_EQ(j["hash"], f.hash().hex());
  EXPECT_EQ(ToolchainFingerprint::from_json(j), f);
  EXPECT_THROW(ToolchainFingerprint::from_json(nlohmann::json::parse("{}")), Error);
}

TEST(Fingerprint, BuildInfoIsFilledByTheBuild) {
  EXPECT_STREQ(kiln_version(), "0.1.0");
  EXPECT_EQ(std::string(kiln_codegen_hash()).size(), 32u);
}

TEST(Keys, ArtifactKeyCoversEveryInput) {
  EnvSnapshot env = CacheEnvRegistry().snapshot(Environment());
  Hash128 base = artifact_key(toolchain(), "src", {"-O3"}, "k<1>", "sm_90a", env);
  EXPECT_EQ(base, artifact_key(toolchain(), "src", {"-O3"}, "k<1>", "sm_90a", env));
  EXPECT_NE(base, artifact_key(toolchain(), "src2", {"-O3"}, "k<1>", "sm_90a", env));
  EXPECT_NE(base, artifact_key(toolchain(), "src", {"-O2"}, "k<1>", "sm_90a", env));
  EXPECT_NE(base, artifact_key(toolchain(), "src", {"-O3", ""}, "k<1>", "sm_90a", env));
  EXPECT_NE(base, artifact_key(toolchain(), "src", {"-O3"}, "k<2>", "sm_90a", env));
  EXPECT_NE(base, artifact_key(toolchain(), "src", {"-O3"}, "k<1>", "sm_80", env));
  ToolchainFingerprint other = toolchain();
  other.compiler = "nvrtc 12.8";
  EXPECT_NE(base, artifact_key(other, "src", {"-O3"}, "k<1>", "sm_90a", env));
}

TEST(Keys, TuningKeyCoversArchToolchainAndDefinition) {
  EnvSnapshot env = CacheEnvRegistry().snapshot(Environment());
  Hash128 base = tuning_key(problem(), "sm_90a", toolchain(), env, definition());
  EXPECT_NE(base, tuning_key(problem(), "sm_80", toolchain(), env, definition()));
  ToolchainFingerprint other = toolchain();
  other.codegen_hash = "def";
  EXPECT_NE(base, tuning_key(problem(), "sm_90a", other, env, definition()));
  // Another kernel of the same name and arguments, or this one edited.
  EXPECT_NE(base, tuning_key(problem(), "sm_90a", toolchain(), env, hash128("edited")));
}

}  // namespace
}  // namespace kiln
