#include "kiln/core/problem.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

TensorArg mat(std::int64_t m, std::int64_t n) {
  return TensorArg::contiguous(DType::kF16, {m, n});
}

TEST(ProblemKey, ArgumentOrderDoesNotMatter) {
  ProblemKey ab("gemm");
  ab.tensor("a", mat(128, 64)).tensor("b", mat(64, 32)).scalar("alpha", std::int64_t{1});
  ProblemKey ba("gemm");
  ba.scalar("alpha", std::int64_t{1}).tensor("b", mat(64, 32)).tensor("a", mat(128, 64));
  EXPECT_EQ(ab.canonical(), ba.canonical());
  EXPECT_EQ(ab.hash(), ba.hash());
  EXPECT_EQ(ab.canonical(), "gemm|a:f16[128,64]{2,1}|b:f16[64,32]{2,1}|#alpha=int:1");
}

TEST(ProblemKey, ShapeDtypeStrideAndScalarsAllMatter) {
  auto key = [](TensorArg a, Value alpha) {
    return ProblemKey("gemm").tensor("a", a).scalar("alpha", alpha).hash();
  };
  Hash128 base = key(mat(128, 64), std::int64_t{1});
  EXPECT_NE(base, key(mat(128, 32), std::int64_t{1}));
  TensorArg bf = mat(128, 64);
  bf.dtype = DType::kBF16;
  EXPECT_NE(base, key(bf, std::int64_t{1}));
  TensorArg transposed{DType::kF16, {128, 64}, {1, 128}, {}};
  EXPECT_NE(base, key(transposed, std::int64_t{1}));
  EXPECT_NE(base, key(mat(128, 64), std::int64_t{2}));
  EXPECT_NE(base, key(mat(128, 64), true));  // type is part of the key
  EXPECT_NE(base,
            ProblemKey("gemm2").tensor("a", mat(128, 64)).scalar("alpha", std::int64_t{1}).hash());
}

TEST(ProblemKey, EquivalentStridesShareAKey) {
  // Two "other" strides are one class: a padded row pitch keys like any other.
  TensorArg pitch_a{DType::kF16, {128, 64}, {72, 1}, {}};
  TensorArg pitch_b{DType::kF16, {128, 64}, {80, 1}, {}};
  EXPECT_EQ(ProblemKey("k").tensor("a", pitch_a).hash(),
            ProblemKey("k").tensor("a", pitch_b).hash());
}

TEST(ProblemKey, BucketsMergeSizes) {
  ProblemKey a("gemm"), b("gemm");
  a.tensor("x", mat(100, 64)).bucket("x", 0, 128);
  b.tensor("x", mat(120, 64)).bucket("x", 0, 128);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_THROW(a.bucket("y", 0, 1), Error);
  EXPECT_THROW(a.bucket("x", 5, 1), Error);
}

TEST(ProblemKey, DuplicateOrUnnamedArgumentsAreRejected) {
  ProblemKey k("gemm");
  k.tensor("a", mat(1, 1));
  EXPECT_THROW(k.tensor("a", mat(2, 2)), Error);
  EXPECT_THROW(k.scalar("a", std::int64_t{1}), Error);
  EXPECT_THROW(k.tensor("", mat(2, 2)), Error);
  EXPECT_THROW(ProblemKey(""), Error);
}

TEST(ProblemKey, JsonRoundTrip) {
  ProblemKey k("gemm");
  k.tensor("a", TensorArg{DType::kBF16, {8, 4}, {0, 1}, {}}).scalar("mode", std::string("fast"));
  ProblemKey back = ProblemKey::from_json(nlohmann::json::parse(k.to_json().dump()));
  EXPECT_EQ(back.canonical(), k.canonical());
}

TEST(ProblemKey, MalformedJsonIsRejected) {
  EXPECT_THROW(ProblemKey::from_json(nlohmann::json::parse("{}")), Error);
  EXPECT_THROW(ProblemKey::from_json(nlohmann::json::parse(
                   R"({"kernel":"k","tensors":{"a":{"dtype":"f16","shape":[2],"strides":"7"}}})")),
               Error);
  EXPECT_THROW(ProblemKey::from_json(nlohmann::json::parse(R"({"kernel":"k","tensors":[]})")),
               Error);
}

}  // namespace
}  // namespace kiln
