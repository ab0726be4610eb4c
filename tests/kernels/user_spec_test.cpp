// User kernel specs (load_user_kernel, and describe_kernel: the one builder
// of kiln/kernels/kernel_description.hpp): the shipped example reads back
// with its constraints and launch rule, every kind of mistake in a spec is
// reported with the field it is in, and a spec's arguments and a signature
// are read by the one parser.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/kernels/kernel_description.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {
namespace {

const std::string kUserKernelDir = std::string(KILN_SOURCE_DIR) + "/examples/user_kernel/";

nlohmann::json minimal_spec() {
  return nlohmann::json::parse(R"json({
    "backend": "cpu",
    "space": {"parameters": [{"name": "B", "values": [1, 2]}]},
    "launch": {"grid": ["ceil_div(N, B)"]},
    "args": [{"name": "x", "dtype": "f32", "shape": ["N"]},
             {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
             {"name": "n", "type": "i32", "value": "N"}]
  })json");
}

// The message of the kiln::Error `fn` throws ("" when it throws none).
template <class F>
std::string thrown(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const nlohmann::json& spec, const std::string& entry = "k<{B}>") {
  return thrown([&] { (void)describe_kernel(spec, "src", entry, "k"); });
}

// The minimal spec with the value at `pointer` replaced.
nlohmann::json with(const char* pointer, nlohmann::json value) {
  auto spec = minimal_spec();
  spec[nlohmann::json::json_pointer(pointer)] = std::move(value);
  return spec;
}

TEST(UserSpec, TheExampleReadsBackWithItsRules) {
  KernelDescription k =
      load_user_kernel(kUserKernelDir + "transpose.cpp", kUserKernelDir + "space.json",
                       "example::transpose<{TILE},{STAGED}>")
          .value();
  EXPECT_EQ(k.tmpl.name, "example_transpose");
  EXPECT_EQ(k.backend, "cpu");
  EXPECT_EQ(k.dims, (std::vector<std::string>{"M", "N"}));
  // The 16 KiB constraint removes TILE=128 (with and without staging).
  EXPECT_EQ(k.tmpl.space.cartesian_size(), 10u);
  EXPECT_EQ(k.tmpl.space.size(), 8u);
  EXPECT_EQ(k.outputs, (std::vector<std::string>{"out"}));
  EXPECT_TRUE(k.restore_value.empty());

  TunableKernel t = k.tunable({{"M", 200}, {"N", 300}});
  const Config staged{{"TILE", std::int64_t{32}}, {"STAGED", true}};
  LaunchGeometry g = t.launch(staged, {});
  EXPECT_EQ(g.grid, (Dim3{10, 7, 1}));
  EXPECT_EQ(g.block, (Dim3{1, 1, 1}));
  EXPECT_EQ(g.shared_bytes, 32u * 32u * 4u);
  const Config direct{{"TILE", std::int64_t{32}}, {"STAGED", false}};
  EXPECT_EQ(t.launch(direct, {}).shared_bytes, 0u);
  ASSERT_TRUE(t.early_prune);
  EXPECT_TRUE(t.early_prune(direct, ProblemKey("x")));
  TunableKernel tiny = k.tunable({{"M", 8}, {"N", 8}});
  EXPECT_FALSE(tiny.early_prune(direct, ProblemKey("x"))) << "a tile larger than the matrix";
}

TEST(UserSpec, DefaultsFollowTheRoles) {
  auto spec = minimal_spec();
  spec["args"][0]["role"] = "inout";
  KernelDescription k = describe_kernel(spec, "src", "k<{B}>", "fallback");
  EXPECT_EQ(k.tmpl.name, "fallback");
  EXPECT_EQ(k.outputs, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(k.restore_value, (std::vector<std::string>{"x"})) << "inout tensors are restored";
  EXPECT_EQ(k.reference, ReferenceKind::kDefaultConfig);
  EXPECT_EQ(std::get<TensorSpec>(k.args[1].kind).init, ArgInit::kZeros) << "outputs start at 0";
  EXPECT_TRUE(std::get<ScalarSpec>(k.args[2].kind).in_key);
  const Config c{{"B", std::int64_t{2}}};
  EXPECT_EQ(k.tunable({{"N", 9}}).launch(c, {}).grid, (Dim3{5, 1, 1}));
}

TEST(UserSpec, MistakesNameTheirField) {
  EXPECT_NE(error_of(with("/backend", "gpu")).find("backend"), std::string::npos);
  EXPECT_NE(error_of(with("/lanch", 1)).find("unknown key \"lanch\""), std::string::npos);
  EXPECT_NE(error_of(with("/launch/grid/0", "ceil_div(N, B")).find("launch.grid[0]"),
            std::string::npos);
  EXPECT_NE(error_of(with("/args/0/dtype", "f17")).find("args[0].dtype"), std::string::npos);
  EXPECT_NE(error_of(with("/args/0/role", "both")).find("args[0].role"), std::string::npos);
  EXPECT_NE(error_of(with("/args/0/shape/0", "B")).find("config parameter 'B'"), std::string::npos);
  EXPECT_NE(error_of(with("/args/2/type", "i16")).find("args[2].type"), std::string::npos);
  EXPECT_NE(error_of(with("/outputs", nlohmann::json::array({"n"}))).find("not a tensor"),
            std::string::npos);
  EXPECT_NE(error_of(with("/reference", "magic")).find("reference"), std::string::npos);
  EXPECT_NE(error_of(with("/space/constraints", nlohmann::json::array({"B <"})))
                .find("space.constraints[0]"),
            std::string::npos);
  EXPECT_NE(error_of(minimal_spec(), "k<{C}>").find("C"), std::string::npos);
  EXPECT_NE(error_of(minimal_spec(), "").find("--entry"), std::string::npos);
  auto twice = minimal_spec();
  twice["args"][1]["name"] = "x";
  EXPECT_NE(error_of(twice).find("given twice"), std::string::npos);
}

// A spec's "args" and a kiln.Kernel's signature are typed by the one
// parser: the same kernel has the same signature either way, and the
// tensor lists' defaults follow it.
TEST(UserSpec, ArgsAndSignaturesAreReadByTheOneParser) {
  const KernelDescription k = describe_kernel(minimal_spec(), "src", "k<{B}>", "k");
  const auto sig = parse_signature({"x: const f32*", " y : f32*", "n: i32"});
  ASSERT_EQ(k.signature.size(), sig.size());
  for (std::size_t i = 0; i < sig.size(); ++i) {
    EXPECT_EQ(k.signature[i].name, sig[i].name);
    EXPECT_EQ(k.signature[i].kind, sig[i].kind);
    EXPECT_EQ(k.signature[i].dtype, sig[i].dtype);
    EXPECT_EQ(k.signature[i].scalar, sig[i].scalar);
    EXPECT_EQ(k.signature[i].read_only, sig[i].read_only) << sig[i].name;
  }
  EXPECT_EQ(parse_signature({"w: void*"})[0].kind, KernelParam::Kind::kPointer);
  EXPECT_NE(error_of(with("/args/2/type", "f32*")).find("args[2].type: expected a scalar type"),
            std::string::npos);
  EXPECT_NE(error_of(with("/args/0/dtype", "void")).find("args[0].dtype"), std::string::npos);
  auto signature_error = [](std::vector<std::string> entries) {
    return thrown([&] { (void)parse_signature(entries); });
  };
  EXPECT_NE(signature_error({"x"}).find("signature entry 'x' has no type"), std::string::npos);
  EXPECT_NE(signature_error({": f32"}).find("has no name"), std::string::npos);
  EXPECT_NE(signature_error({"x: f32", "x: i32"}).find("names 'x' twice"), std::string::npos);
  EXPECT_NE(signature_error({"x: float32x"}).find("unknown type 'float32x'"), std::string::npos);
  EXPECT_NE(signature_error({"x: f17*"}).find("unknown element type 'f17'"), std::string::npos);

  // Outputs default to the tensors the kernel may write, or every tensor
  // when all are read-only (it writes through something Kiln cannot see);
  // raw pointers are never compared (Kiln does not know their extent), and
  // a scalar is no tensor to compare.
  KernelDescription d;
  d.tmpl.name = "k";
  auto outputs_of = [&](std::vector<std::string> signature) {
    d.signature = parse_signature(signature);
    describe_tensor_lists(d, std::nullopt, std::nullopt, {});
    return d.outputs;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(outputs_of({"a: f32", "x: const f32*", "y: f32*", "n: i32"}), Names{"y"});
  EXPECT_EQ(outputs_of({"x: f32*", "y: f32*"}), (Names{"x", "y"}));
  EXPECT_EQ(outputs_of({"w: void*", "v: const void*", "y: f32*"}), Names{"y"});
  EXPECT_EQ(outputs_of({"x: const f32*", "y: const f32*", "n: i32"}), (Names{"x", "y"}));
  EXPECT_TRUE(d.restore_value.empty());
  EXPECT_NE(thrown([&] {
              describe_tensor_lists(d, Names{"n"}, std::nullopt, {});
            }).find("outputs names 'n', which is not a tensor parameter of k (its tensors: x, y)"),
            std::string::npos);
  EXPECT_NE(thrown([&] {
              check_parameter_names(d, {"m"}, "key", ParamKinds::kAny);
            }).find("key names 'm', which is not a parameter of k (its parameters: x, y, n)"),
            std::string::npos);
}

// A field of the wrong JSON type is named like any other mistake, never an
// uncaught JSON exception; a tolerance out of its range is refused, since
// it would fail every correct config (a negative atol, a cosine above 1).
TEST(UserSpec, WrongTypesAndTolerancesOutOfRangeNameTheirField) {
  const std::pair<nlohmann::json, const char*> cases[] = {
      {with("/args/0/role", 5), "args[0].role: expected a string, got 5"},
      {with("/args/0/init", nlohmann::json::array({1})), "args[0].init: expected a string"},
      {with("/args/2/in_key", "yes"), "args[2].in_key: expected true or false"},
      {with("/description", 5), "spec.description: expected a string"},
      {with("/reference", true), "spec.reference: expected a string"},
      {with("/defines", nlohmann::json{{"X", 5}}), "defines:"},
      {with("/tolerance", nlohmann::json{{"atol", "x"}}), "tolerance.atol: expected a number"},
      {with("/tolerance", nlohmann::json{{"atol", -1}}), "tolerance.atol: expected a number"},
      {with("/tolerance", nlohmann::json{{"rtol", -0.5}}), "tolerance.rtol: expected a number"},
      {with("/tolerance", nlohmann::json{{"min_cosine", 2}}), "tolerance.min_cosine"},
      {with("/tolerance", nlohmann::json{{"min_cosine", -5}}), "tolerance.min_cosine"},
  };
  for (const auto& [spec, expected] : cases)
    EXPECT_NE(error_of(spec).find(expected), std::string::npos)
        << spec.dump() << " -> " << error_of(spec);
  // In range, the limits included, they are taken.
  auto fine = minimal_spec();
  fine["tolerance"] = {{"atol", 0}, {"rtol", 1e-3}, {"min_cosine", 1}};
  EXPECT_EQ(error_of(fine), "");
}

// The whole spec enters the kernel's definition hash (as its `version`):
// an edit anywhere in it, the launch rule and the arguments included, is a
// changed kernel whose old tuning records are not served; the same spec
// written differently is the same kernel.
TEST(UserSpec, EveryEditOfTheSpecChangesTheDefinition) {
  const ShapeDims shape{{"N", 9}};
  auto definition = [&](const nlohmann::json& spec, const std::string& source = "src",
                        const std::string& entry = "k<{B}>") {
    return definition_hash(describe_kernel(spec, source, entry, "k").tunable(shape));
  };
  const Hash128 base = definition(minimal_spec());
  EXPECT_EQ(definition(nlohmann::json::parse(minimal_spec().dump(4))), base)
      << "layout and key order are not edits";
  EXPECT_NE(definition(minimal_spec(), "src // edited"), base);
  EXPECT_NE(definition(minimal_spec(), "src", "k<{B} * 1>"), base);
  const std::vector<std::pair<const char*, nlohmann::json>> edits = {
      {"/launch/grid/0", "(N + B - 1) / B"},
      {"/launch/block", nlohmann::json::array({2})},
      {"/launch/shared_bytes", "B * 4"},
      {"/space/parameters/0/values", nlohmann::json::array({1, 2, 4})},
      {"/space/constraints", nlohmann::json::array({"B <= 2"})},
      {"/space/default", nlohmann::json::object({{"B", 2}})},
      {"/args/0/init", "ones"},
      {"/args/2/in_key", false},
      {"/early_prune", nlohmann::json::array({"B <= N"})},
      {"/defines", nlohmann::json::object({{"KILN_FAST", "1"}})},
      {"/options", nlohmann::json::array({"-DKILN_FAST=1"})},
      {"/tolerance", nlohmann::json::object({{"atol", 1e-3}})},
      {"/reference", "none"},
      {"/description", "y = x, in blocks of B"},
  };
  for (const auto& [pointer, value] : edits) {
    nlohmann::json spec = minimal_spec();
    spec[nlohmann::json::json_pointer(pointer)] = value;
    EXPECT_NE(definition(spec), base) << pointer;
  }
}

TEST(UserSpec, MissingFilesAndBadJsonNameThePath) {
  auto missing =
      load_user_kernel(kUserKernelDir + "transpose.cpp", "/nonexistent/space.json", "e<{TILE}>");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("/nonexistent/space.json"), std::string::npos);
  auto not_json = load_user_kernel(kUserKernelDir + "transpose.cpp",
                                   kUserKernelDir + "transpose.cpp", "e<{TILE}>");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.error().message.find("not valid JSON"), std::string::npos)
      << not_json.error().message;
}

// A path naming something other than a file is refused at once with what it
// is: a directory, a device that never ends (/dev/zero), a FIFO no one
// writes (which a plain read would wait on forever). A number no double
// holds is bad JSON, not an uncaught exception.
TEST(UserSpec, PathsThatAreNoFileAreRefusedWithoutReading) {
  const std::string spec = kUserKernelDir + "space.json", tmpl = kUserKernelDir + "transpose.cpp";
  const std::string entry = "example::transpose<{TILE},{STAGED}>";
  auto dir = load_user_kernel(kUserKernelDir, spec, entry);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("is a directory, not a file"), std::string::npos)
      << dir.error().message;
  auto zero = load_user_kernel(tmpl, "/dev/zero", entry);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("is a character device"), std::string::npos)
      << zero.error().message;
  char fifo_dir[] = "/tmp/kiln-spec-XXXXXX";
  ASSERT_NE(::mkdtemp(fifo_dir), nullptr);
  const std::string fifo = std::string(fifo_dir) + "/space.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pipe = load_user_kernel(tmpl, fifo, entry);
  ASSERT_FALSE(pipe.ok());
  EXPECT_NE(pipe.error().message.find("is a FIFO"), std::string::npos) << pipe.error().message;
  const std::string huge = std::string(fifo_dir) + "/huge.json";
  std::ofstream(huge) << R"({"backend": "cpu", "x": 1e400})";
  auto overflow = load_user_kernel(tmpl, huge, entry);
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.error().message.find("not valid JSON"), std::string::npos)
      << overflow.error().message;
  const std::string missing_dir = std::string(fifo_dir) + "/inc.json";
  nlohmann::json with_dirs = nlohmann::json::parse(std::ifstream(spec));
  with_dirs["include_dirs"] = {"no-such-dir"};
  std::ofstream(missing_dir) << with_dirs.dump();
  auto no_dir = load_user_kernel(tmpl, missing_dir, entry);
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.error().message.find("include_dirs[0]: " + std::string(fifo_dir) +
                                        "/no-such-dir is not a directory"),
            std::string::npos)
      << no_dir.error().message;
  std::filesystem::remove_all(fifo_dir);
}

}  // namespace
}  // namespace kiln
