# `cmake --install`: Kiln's static libraries, public headers, the `kiln`
# command and the benchmark worker, plus a CMake package so another project
# can `find_package(kiln)` and link `kiln::kiln` (examples/find_package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# Every library of this build, in no particular order; the two interface
# helpers travel too because the static libraries name them as link-only
# dependencies (they carry no flags into a consumer).
set(_kiln_exported)
foreach(t kiln_warnings kiln_internal kiln_xxhash kiln_core kiln_process kiln_compile kiln_cache kiln_search kiln_tuner kiln_device
          kiln_cache_redis_linked kiln_cache_redis_lazy kiln_cuda kiln_cpu_runtime kiln_cpu kiln_replay kiln_backends_linked kiln_backends_lazy kiln_backends kiln_kernels kiln_framework kiln)
  if(TARGET ${t})
    list(APPEND _kiln_exported ${t})
  endif()
endforeach()

target_include_directories(kiln_core PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS ${_kiln_exported} EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS kiln_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})

# What the consumer's find_package(kiln) must find again: the same LLVM and
# Clang packages when the CPU backend is in, nlohmann_json, threads.
set(KILN_CONFIG_HAVE_LLVM ${KILN_HAVE_LLVM})
set(KILN_CONFIG_HAVE_CUDA ${KILN_HAVE_CUDA})
set(KILN_CONFIG_LLVM_DIR "${LLVM_DIR}")
set(KILN_CONFIG_CLANG_DIR "${Clang_DIR}")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})
