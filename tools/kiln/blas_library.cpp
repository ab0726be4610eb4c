#include "blas_library.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <map>

namespace kiln::tool {

namespace {

constexpr int kBlasRowMajor = 101, kBlasNoTrans = 111;

using SgemmInt = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                          float, float*, int);
using SgemmLong = void (*)(int, int, int, long, long, long, float, const float*, long, const float*,
                           long, float, float*, long);

// How a build names its symbols: numpy's OpenBLAS (scipy-openblas64) has
// scipy_cblas_sgemm64_, an ILP64 build without a prefix cblas_sgemm64_.
struct SymbolNaming {
  const char* prefix;
  const char* suffix;
};
constexpr SymbolNaming kNamings[] = {{"", ""}, {"scipy_", "64_"}, {"scipy_", ""}, {"", "64_"}};

void* find_symbol(void* handle, const SymbolNaming& naming, const char* name) {
  return dlsym(handle, (std::string(naming.prefix) + name + naming.suffix).c_str());
}

std::string opened_file(void* handle, const std::string& name) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !*map->l_name)
    return name;
  char real[PATH_MAX];
  return realpath(map->l_name, real) ? std::string(real) : std::string(map->l_name);
}

// The word after `word ` in `text`: "OpenBLAS 0.3.21 NO_LAPACKE ..." gives "0.3.21".
std::string word_after(const std::string& text, const std::string& word) {
  const std::size_t at = text.find(word + " ");
  if (at == std::string::npos) return "";
  const std::size_t start = at + word.size() + 1;
  return text.substr(start, text.find(' ', start) - start);
}

template <class Fn>
Fn symbol_as(void* handle, const SymbolNaming& naming, const char* name) {
  return reinterpret_cast<Fn>(find_symbol(handle, naming, name));
}

void describe_openblas(void* handle, const SymbolNaming& naming, BlasLibrary& blas) {
  blas.flavor = BlasFlavor::kOpenBlas;
  if (auto core = symbol_as<const char* (*)()>(handle, naming, "openblas_get_corename"))
    blas.kernel = core();
  if (auto config = symbol_as<const char* (*)()>(handle, naming, "openblas_get_config"))
    blas.config = config();
  blas.version = word_after(blas.config, "OpenBLAS");
  blas.int64 =
      std::string(naming.suffix) == "64_" || blas.config.find("USE64BITINT") != std::string::npos;
  blas.set_threads_int = symbol_as<void (*)(int)>(handle, naming, "openblas_set_num_threads");
}

void describe_blis(void* handle, BlasLibrary& blas) {
  blas.flavor = BlasFlavor::kBlis;
  if (auto init = reinterpret_cast<void (*)()>(dlsym(handle, "bli_init"))) init();
  blas.version = reinterpret_cast<const char* (*)()>(dlsym(handle, "bli_info_get_version_str"))();
  auto arch = reinterpret_cast<int (*)()>(dlsym(handle, "bli_arch_query_id"));
  auto arch_name = reinterpret_cast<const char* (*)(int)>(dlsym(handle, "bli_arch_string"));
  if (arch && arch_name) blas.kernel = arch_name(arch());
  if (auto size = reinterpret_cast<long (*)()>(dlsym(handle, "bli_info_get_blas_int_type_size")))
    blas.int64 = size() == 64;
  blas.set_threads_long =
      reinterpret_cast<void (*)(long)>(dlsym(handle, "bli_thread_set_num_threads"));
}

// MKL's code branches (mkl_cbwr_get_auto_branch, mkl_cbwr.h).
std::string mkl_branch_name(int branch) {
  static const std::map<int, const char*> names = {
      {2, "COMPATIBLE"}, {3, "SSE2"},  {6, "SSSE3"},       {7, "SSE4_1"},  {8, "SSE4_2"},
      {9, "AVX"},        {10, "AVX2"}, {11, "AVX512_MIC"}, {12, "AVX512"}, {13, "AVX512_MIC_E1"},
      {14, "AVX512_E1"}};
  auto it = names.find(branch);
  return it == names.end() ? "branch " + std::to_string(branch) : it->second;
}

void describe_mkl(void* handle, BlasLibrary& blas) {
  blas.flavor = BlasFlavor::kMkl;
  char text[256] = {};
  reinterpret_cast<void (*)(char*, int)>(dlsym(handle, "MKL_Get_Version_String"))(text,
                                                                                  sizeof text - 1);
  blas.config = text;
  blas.version = word_after(blas.config, "Version");
  if (auto branch = reinterpret_cast<int (*)()>(dlsym(handle, "mkl_cbwr_get_auto_branch")))
    blas.kernel = mkl_branch_name(branch());
  for (const char* name : {"MKL_Set_Num_Threads", "mkl_set_num_threads"}) {
    if (!blas.set_threads_int)
      blas.set_threads_int = reinterpret_cast<void (*)(int)>(dlsym(handle, name));
  }
}

}  // namespace

const char* blas_flavor_name(BlasFlavor flavor) {
  switch (flavor) {
    case BlasFlavor::kOpenBlas:
      return "OpenBLAS";
    case BlasFlavor::kBlis:
      return "BLIS";
    case BlasFlavor::kMkl:
      return "MKL";
  }
  return "?";
}

const char* blas_kernel_variable(BlasFlavor flavor) {
  switch (flavor) {
    case BlasFlavor::kOpenBlas:
      return "OPENBLAS_CORETYPE";
    case BlasFlavor::kBlis:
      return "BLIS_ARCH_TYPE";
    case BlasFlavor::kMkl:
      return "MKL_ENABLE_INSTRUCTIONS";
  }
  return "";
}

int blas_kernel_isa_level(const std::string& kernel) {
  static const std::map<std::string, int> levels = {
      // OpenBLAS's x86-64 cores (its dynamic.c), BLIS's architectures, MKL's branches.
      {"katmai", 1},     {"coppermine", 1}, {"northwood", 1},    {"banias", 1},
      {"athlon", 1},     {"opteron", 1},    {"generic", 1},      {"compatible", 1},
      {"sse2", 1},       {"prescott", 2},   {"opteron_sse3", 2}, {"atom", 2},
      {"nano", 2},       {"core2", 3},      {"ssse3", 3},        {"penryn", 4},
      {"dunnington", 4}, {"nehalem", 4},    {"barcelona", 4},    {"bobcat", 4},
      {"sse4_1", 4},     {"sse4_2", 4},     {"sandybridge", 5},  {"bulldozer", 5},
      {"avx", 5},        {"piledriver", 6}, {"steamroller", 6},  {"excavator", 6},
      {"haswell", 7},    {"zen", 7},        {"zen2", 7},         {"zen3", 7},
      {"avx2", 7},       {"skylakex", 8},   {"cooperlake", 8},   {"sapphirerapids", 8},
      {"skx", 8},        {"knl", 8},        {"zen4", 8},         {"zen5", 8},
      {"avx512", 8},     {"avx512_e1", 8},  {"avx512_mic", 8},   {"avx512_mic_e1", 8}};
  std::string key = kernel;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto it = levels.find(key);
  return it == levels.end() ? 0 : it->second;
}

void BlasLibrary::use_threads(int threads) const {
  cpu_set_t mask;
  const bool have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
  if (set_threads_int) set_threads_int(threads);
  if (set_threads_long) set_threads_long(threads);
  if (have_mask) sched_setaffinity(0, sizeof mask, &mask);
}

void BlasLibrary::gemm(const float* a, const float* b, float* c, int m, int n, int k) const {
  if (int64) {
    reinterpret_cast<SgemmLong>(sgemm)(kBlasRowMajor, kBlasNoTrans, kBlasNoTrans, m, n, k, 1.0f, a,
                                       k, b, n, 0.0f, c, n);
  } else {
    reinterpret_cast<SgemmInt>(sgemm)(kBlasRowMajor, kBlasNoTrans, kBlasNoTrans, m, n, k, 1.0f, a,
                                      k, b, n, 0.0f, c, n);
  }
}

Result<BlasLibrary> open_blas_library(const std::string& name) {
  // OpenBLAS binds the thread that loads it to one core unless told not to;
  // the mask is restored after loading too.
  setenv("OPENBLAS_MAIN_FREE", "1", 0);
  // MKL's single library picks 32- or 64-bit sizes from this; the call
  // below passes 32-bit ones.
  setenv("MKL_INTERFACE_LAYER", "LP64", 1);
  cpu_set_t mask;
  const bool have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
  // NOTES: the handle stays open for the process: the library's threads live in it.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (have_mask) sched_setaffinity(0, sizeof mask, &mask);
  if (!handle) {
    const char* why = dlerror();
    return make_error(ErrorCode::kUnavailable,
                      "cannot open " + name + ": " + (why ? why : "the loader gave no reason"),
                      {{"library", name}});
  }
  BlasLibrary blas;
  blas.library = opened_file(handle, name);
  for (const SymbolNaming& naming : kNamings) {
    blas.sgemm = find_symbol(handle, naming, "cblas_sgemm");
    if (!blas.sgemm) continue;
    if (find_symbol(handle, naming, "openblas_get_corename")) {
      describe_openblas(handle, naming, blas);
    } else if (dlsym(handle, "bli_info_get_version_str")) {
      describe_blis(handle, blas);
    } else if (dlsym(handle, "MKL_Get_Version_String")) {
      describe_mkl(handle, blas);
    } else {
      break;
    }
    if (!blas.set_threads_int && !blas.set_threads_long) {
      return make_error(ErrorCode::kUnavailable,
                        blas.library + " is " + blas_flavor_name(blas.flavor) +
                            " without its thread-count call: its threads cannot be matched to "
                            "Kiln's",
                        {{"library", blas.library}});
    }
    return blas;
  }
  return make_error(ErrorCode::kUnavailable,
                    blas.library + " is not a BLAS kiln bench gemm knows: it needs cblas_sgemm " +
                        "and OpenBLAS's openblas_get_corename, BLIS's bli_info_get_version_str " +
                        "or MKL's MKL_Get_Version_String" +
                        (blas.sgemm ? " (it has cblas_sgemm only)" : ""),
                    {{"library", blas.library}});
}

}  // namespace kiln::tool
