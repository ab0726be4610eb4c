#include "kiln/core/config_space.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

// Expects `fn` to throw kiln::Error whose message contains every needle.
template <class Fn>
void expect_error_mentions(Fn fn, std::initializer_list<const char*> needles) {
  try {
    fn();
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    for (const char* n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nlacks: " << n;
    }
  }
}

ConfigSpace gemm_space() {
  ConfigSpace s;
  s.param("BM", {64, 128}).param("BN", {64, 128}).param("STAGES", {2, 3, 4});
  // Shared memory: (BM + BN) * BK(32) * 2 bytes * STAGES within 48 KiB.
  s.constraint("smem<=48KiB", [](const Config& c) {
    return (c.get_int("BM") + c.get_int("BN")) * 32 * 2 * c.get_int("STAGES") <= 48 * 1024;
  });
  return s;
}

TEST(ConfigSpace, EnumerationIsDeterministicOdometerOrder) {
  ConfigSpace s;
  s.param("A", {1, 2}).param("B", {10, 20, 30});
  auto all = s.enumerate();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0].to_string(), "A=1,B=10");
  EXPECT_EQ(all[1].to_string(), "A=1,B=20");
  EXPECT_EQ(all[3].to_string(), "A=2,B=10");
  EXPECT_EQ(s.enumerate(), all);
  for (std::uint64_t i = 0; i < 6; ++i) EXPECT_EQ(s.config_at(i), all[i]);
}

TEST(ConfigSpace, ConstraintsFilterAndSizeCounts) {
  ConfigSpace s = gemm_space();
  EXPECT_EQ(s.cartesian_size(), 12u);
  auto all = s.enumerate();
  for (const auto& c : all) EXPECT_TRUE(s.violated(c).empty()) << c.to_string();
  EXPECT_EQ(s.size(), all.size());
  // (128+128)*32*2*4 = 64 KiB and (128+64)*32*2*4 = 48 KiB: one config pruned.
  EXPECT_EQ(all.size(), 11u);
  Config big{{"BM", std::int64_t{128}}, {"BN", std::int64_t{128}}, {"STAGES", std::int64_t{4}}};
  EXPECT_EQ(s.violated(big), std::vector<std::string>{"smem<=48KiB"});
  EXPECT_FALSE(s.contains(big));
}

TEST(ConfigSpace, FilterAppliesAFurtherPredicate) {
  ConfigSpace s = gemm_space();
  auto only3 = s.filter([](const Config& c) { return c.get_int("STAGES") == 3; });
  ASSERT_FALSE(only3.empty());
  for (const auto& c : only3) EXPECT_EQ(c.get_int("STAGES"), 3);
}

TEST(ConfigSpace, MixedTypesAndStrings) {
  ConfigSpace s;
  s.param("LAYOUT", {"row", "col"}).param("SPLIT", {true, false});
  EXPECT_EQ(s.size(), 4u);
  EXPECT_EQ(s.parameters()[0].type, ValueType::kString);
  EXPECT_EQ(s.parameters()[1].type, ValueType::kBool);
}

TEST(ConfigSpace, EmptyValueListIsRejectedByName) {
  ConfigSpace s;
  expect_error_mentions([&] { s.param("BK", std::vector<Value>{}); }, {"'BK'", "empty"});
}

TEST(ConfigSpace, DuplicateParameterIsRejectedByName) {
  ConfigSpace s;
  s.param("BM", {64});
  expect_error_mentions([&] { s.param("BM", {128}); }, {"'BM'", "twice"});
}

TEST(ConfigSpace, MixedValueTypesAndRepeatsAreRejected) {
  ConfigSpace s;
  expect_error_mentions(
      [&] {
        s.param("X", {Value{std::int64_t{1}}, Value{true}});
      },
      {"'X'", "mixes"});
  expect_error_mentions([&] { s.param("Y", {1, 1}); }, {"'Y'", "twice"});
}

TEST(ConfigSpace, UnknownParameterInConfigIsNamed) {
  ConfigSpace s = gemm_space();
  Config c = s.default_config();
  c.set("BX", std::int64_t{1});
  expect_error_mentions([&] { s.check_members(c); }, {"unknown parameter 'BX'"});
}

TEST(ConfigSpace, MissingParameterInConfigIsNamed) {
  ConfigSpace s = gemm_space();
  Config c{{"BM", std::int64_t{64}}, {"BN", std::int64_t{64}}};
  expect_error_mentions([&] { s.check_members(c); }, {"missing parameter 'STAGES'"});
}

TEST(ConfigSpace, ValueOutsideTheSpaceIsNamed) {
  ConfigSpace s = gemm_space();
  Config c{{"BM", std::int64_t{96}}, {"BN", std::int64_t{64}}, {"STAGES", std::int64_t{2}}};
  expect_error_mentions([&] { s.check_members(c); }, {"'BM'", "96", "[64, 128]"});
}

TEST(ConfigSpace, DefaultViolatingAConstraintIsRejected) {
  ConfigSpace s = gemm_space();
  Config big{{"BM", std::int64_t{128}}, {"BN", std::int64_t{128}}, {"STAGES", std::int64_t{4}}};
  expect_error_mentions([&] { s.default_config(big); }, {"default", "smem<=48KiB"});
}

TEST(ConfigSpace, DefaultIsExplicitOrFirstValid) {
  ConfigSpace s = gemm_space();
  EXPECT_FALSE(s.has_explicit_default());
  EXPECT_EQ(s.default_config(), s.enumerate().front());
  Config pick{{"BM", std::int64_t{128}}, {"BN", std::int64_t{64}}, {"STAGES", std::int64_t{2}}};
  s.default_config(pick);
  EXPECT_EQ(s.default_config(), pick);
}

TEST(ConfigSpace, NoValidConfigIsAClearError) {
  ConfigSpace s;
  s.param("A", {1}).constraint("never", [](const Config&) { return false; });
  EXPECT_EQ(s.size(), 0u);
  expect_error_mentions([&] { (void)s.default_config(); }, {"no config", "relax"});
}

TEST(ConfigSpace, JsonRoundTripRebindsConstraintsByName) {
  ConfigSpace s = gemm_space();
  Config pick{{"BM", std::int64_t{64}}, {"BN", std::int64_t{128}}, {"STAGES", std::int64_t{3}}};
  s.default_config(pick);
  nlohmann::json j = s.to_json();
  ConstraintRegistry registry{{"smem<=48KiB", s.constraints()[0].predicate}};
  ConfigSpace back = ConfigSpace::from_json(nlohmann::json::parse(j.dump()), registry);
  EXPECT_EQ(back.enumerate(), s.enumerate());
  EXPECT_EQ(back.default_config(), pick);
  EXPECT_EQ(back.to_json(), j);
}

TEST(ConfigSpace, JsonWithUnknownConstraintOrBadShapeIsRejected) {
  nlohmann::json j = gemm_space().to_json();
  expect_error_mentions([&] { (void)ConfigSpace::from_json(j); }, {"smem<=48KiB", "registry"});
  expect_error_mentions([&] { (void)ConfigSpace::from_json(nlohmann::json::parse("{}")); },
                        {"parameters"});
  auto typed =
      nlohmann::json::parse(R"({"parameters":[{"name":"A","type":"bool","values":[1,2]}]})");
  expect_error_mentions([&] { (void)ConfigSpace::from_json(typed); }, {"'A'", "bool"});
}

// Device constraints: a space whose constraints read the device (vector
// width here) is bound to one before use, and each device gets its own.
ConfigSpace vector_space() {
  ConfigSpace s;
  s.param("VEC", {4, 8, 16, 32})
      .device_constraint("VEC<=vector", [](const Config& c, const DeviceTraits& d) {
        return c.get_int("VEC") <= d.vector_floats();
      });
  return s;
}

DeviceTraits device_of(int bits) {
  DeviceTraits d;
  d.name = "v" + std::to_string(bits);
  d.vector_bits = bits;
  return d;
}

TEST(ConfigSpace, DeviceConstraintsSeeTheDeviceTheSpaceIsBoundTo) {
  const ConfigSpace narrow = vector_space().for_device(device_of(256));
  const ConfigSpace wide = vector_space().for_device(device_of(512));
  EXPECT_EQ(narrow.size(), 2u);  // 4, 8
  EXPECT_EQ(wide.size(), 3u);    // 4, 8, 16
  EXPECT_EQ(narrow.violated(Config{{"VEC", std::int64_t{16}}}),
            std::vector<std::string>{"VEC<=vector"});
  EXPECT_TRUE(wide.contains(Config{{"VEC", std::int64_t{16}}}));
  ASSERT_NE(wide.device(), nullptr);
  EXPECT_EQ(wide.device()->vector_bits, 512);
  // The device enters the JSON, hence the definition hash.
  EXPECT_NE(narrow.to_json(), wide.to_json());
  EXPECT_NE(narrow.to_json().dump().find("v256: 256-bit"), std::string::npos) << narrow.to_json();
}

TEST(ConfigSpace, AnUnboundDeviceConstraintIsNeverSilentlySkipped) {
  const ConfigSpace unbound = vector_space();
  EXPECT_EQ(unbound.device(), nullptr);
  expect_error_mentions([&] { (void)unbound.enumerate(); }, {"VEC<=vector", "for_device"});
  expect_error_mentions(
      [&] {
        (void)unbound.violated(Config{{"VEC", std::int64_t{4}}});
      },
      {"for_device"});
  EXPECT_EQ(unbound.to_json()["device_constraints"], nlohmann::json::array({"VEC<=vector"}));
}

TEST(ConfigSpace, DeviceConstraintMisuseIsNamed) {
  ConfigSpace s = vector_space();
  auto always = [](const Config&, const DeviceTraits&) { return true; };
  expect_error_mentions([&] { s.device_constraint("VEC<=vector", always); },
                        {"'VEC<=vector'", "twice"});
  const ConfigSpace bound = s.for_device(device_of(128));
  expect_error_mentions([&] { (void)bound.for_device(device_of(512)); }, {"already bound"});
  ConfigSpace late = bound;
  expect_error_mentions([&] { late.device_constraint("x", always); }, {"before for_device"});
}

}  // namespace
}  // namespace kiln
