// Offline tuning, part 2 of 2: the application at run time. It opens the
// table part 1 exported, read-only, and looks up the config for each shape
// it calls. It never constructs a compiler (no Clang, no NVRTC at run time):
// the device only identifies the machine the records must match. A shape
// the table does not hold falls back to the kernel's default config.
//   usage: kiln_example_offline_lookup [TABLE.json]
#include <cstdio>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/kernels/shipped_kernels.hpp"
#include "shapes.hpp"

using namespace kiln;

int main(int argc, char** argv) {
  // The table path; the ctest tests use the default, in their build directory.
  const char* path = argc > 1 ? argv[1] : "offline_table.json";
  // (1) The shipped table, read-only: lookups never write it.
  TuningCache table = TuningCache::open_file(path, /*read_only=*/true);

  // (2) Who is asking: this kernel (its definition hash), device, toolchain
  // and environment. A record tuned for another version of the kernel, on
  // another machine or toolchain is a miss, never served.
  const ShippedKernel& gemm = *find_shipped_kernel(example::kKernel);
  const TunableKernel kernel = gemm.kernel();
  auto device = cpu::open_device();
  if (!device.ok()) return 1;
  const TuningIdentity identity{definition_hash(kernel), device_identity(**device),
                                current_toolchain("cpu"), CacheEnvRegistry::global().snapshot()};

  // (3) Look up each shape's config by its problem key (kernel name plus
  // the arguments' dtypes, shapes and strides); the tuned shapes and one
  // shape nobody tuned.
  std::vector<ShapeDims> shapes = example::shapes();
  shapes.push_back({{"M", 32}, {"N", 32}, {"K", 32}});
  std::size_t found = 0;
  for (const ShapeDims& shape : shapes) {
    auto call = make_call(**device, gemm.args(DType::kF32), shape, 0);
    if (!call.ok()) return 1;
    auto record = table.lookup(problem_key(kernel.tmpl.name, call->args), identity);
    if (record) ++found;
    const Config config = record ? record->best : kernel.tmpl.space.default_config();
    std::printf("%-22s -> %s (%s)\n", example::shape_text(shape).c_str(),
                config.to_string().c_str(), record ? "from the table" : "not tuned: the default");
  }
  // Every tuned shape must be found, the untuned one must not.
  return found == example::shapes().size() ? 0 : 1;
}
