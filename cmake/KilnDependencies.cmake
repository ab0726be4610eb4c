# Finds Kiln's dependencies. Header-only ones (nlohmann/json, xxHash, CLI11)
# are plain include paths so the tree also builds where only copies of the
# headers exist (the lent GPU machine, see docs/gpu.md).
find_package(Threads REQUIRED)

find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  find_path(KILN_NLOHMANN_INCLUDE nlohmann/json.hpp REQUIRED)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${KILN_NLOHMANN_INCLUDE})
endif()

find_path(KILN_XXHASH_INCLUDE xxhash.h REQUIRED)
add_library(kiln_xxhash INTERFACE)
target_include_directories(kiln_xxhash SYSTEM INTERFACE ${KILN_XXHASH_INCLUDE})
# XXH_INLINE_ALL makes xxHash header-only: nothing to link, nothing to ship.
target_compile_definitions(kiln_xxhash INTERFACE XXH_INLINE_ALL)

find_path(KILN_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)

# --- CUDA toolkit (headers only; NVRTC and the driver are dlopen'ed) -------
set(KILN_CUDA_STATUS "off")
if(NOT KILN_WITH_CUDA STREQUAL "OFF")
  set(_cuda_hints $ENV{CUDA_HOME} $ENV{CUDA_PATH} /usr/local/cuda)
  find_path(KILN_CUDA_INCLUDE nvrtc.h HINTS ${_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
  find_path(KILN_CUDA_DRIVER_INCLUDE cuda.h HINTS ${_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
  if(KILN_CUDA_INCLUDE AND KILN_CUDA_DRIVER_INCLUDE)
    get_filename_component(KILN_CUDA_ROOT ${KILN_CUDA_INCLUDE} DIRECTORY)
    set(KILN_CUDA_STATUS "on (${KILN_CUDA_ROOT})")
    set(KILN_HAVE_CUDA ON)
  elseif(KILN_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KILN_WITH_CUDA=ON but nvrtc.h/cuda.h were not found under $CUDA_HOME, "
                        "$CUDA_PATH or /usr/local/cuda. Set CUDA_HOME or configure with -DKILN_WITH_CUDA=OFF.")
  else()
    set(KILN_CUDA_STATUS "off (no CUDA toolkit at $CUDA_HOME or /usr/local/cuda)")
  endif()
else()
  set(KILN_CUDA_STATUS "off (KILN_WITH_CUDA=OFF)")
endif()

# --- LLVM + Clang 19 (CPU backend) -----------------------------------------
set(KILN_LLVM_STATUS "off")
if(NOT KILN_WITH_LLVM STREQUAL "OFF")
  find_package(LLVM 19 QUIET CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  find_package(Clang QUIET CONFIG HINTS /usr/lib/llvm-19/lib/cmake/clang)
  if(LLVM_FOUND AND Clang_FOUND)
    set(KILN_LLVM_STATUS "on (LLVM ${LLVM_PACKAGE_VERSION})")
    set(KILN_HAVE_LLVM ON)
  elseif(KILN_WITH_LLVM STREQUAL "ON")
    message(FATAL_ERROR "KILN_WITH_LLVM=ON but LLVM 19 / Clang 19 CMake packages were not found. "
                        "Run scripts/setup.sh or configure with -DKILN_WITH_LLVM=OFF.")
  else()
    set(KILN_LLVM_STATUS "off (LLVM 19 and Clang 19 not found; run scripts/setup.sh)")
  endif()
else()
  set(KILN_LLVM_STATUS "off (KILN_WITH_LLVM=OFF)")
endif()
