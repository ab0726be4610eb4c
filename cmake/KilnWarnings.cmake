# Warning flags for Kiln's own targets (not for third-party headers, which are
# included as SYSTEM). CI configures with KILN_WERROR=ON.
add_library(kiln_warnings INTERFACE)
target_compile_options(kiln_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
                       -Wimplicit-fallthrough)
# GCC 12 reports -Wrestrict false positives inside std::string at -O3
# (GCC bug 105329); they are not in Kiln's code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(kiln_warnings INTERFACE -Wno-restrict)
endif()
# Clang with libstdc++ 12 (Debian 12) reports std::stable_sort's own use of
# the deprecated std::get_temporary_buffer at every call site in C++20;
# libstdc++ silences it for GCC only. Kiln deprecates nothing of its own.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(kiln_warnings INTERFACE -Wno-deprecated-declarations)
endif()
if(KILN_WERROR)
  target_compile_options(kiln_warnings INTERFACE -Werror)
endif()

if(KILN_SANITIZE)
  add_compile_options(-fsanitize=${KILN_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KILN_SANITIZE})
endif()

# Builds the given sources of the calling directory at -O2 in a sanitizer
# build, still instrumented, outside the unity batches (their own flags):
# for hot loops whose -O0 speed made the sanitizer stages slow. The
# optimiser changes their speed, not what is checked. No-op otherwise.
function(kiln_optimise_when_sanitized)
  if(KILN_SANITIZE)
    set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                                PROPERTIES COMPILE_OPTIONS -O2 SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endfunction()
