# kiln_example_warm_rerun(TARGET): the example's test (example.TARGET) runs
# against a private cache directory that a setup test empties first, and a
# second test runs the program again with --expect-warm, which fails unless
# that second process was served from the cache on disk with nothing compiled.
function(kiln_example_warm_rerun target)
  if(NOT (BUILD_TESTING OR KILN_BUILD_TESTS))
    return()
  endif()
  set(cache ${CMAKE_CURRENT_BINARY_DIR}/${target}-cache)
  add_test(NAME example.${target}.clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${cache})
  add_test(NAME example.${target}.warm COMMAND ${target} --expect-warm)
  set_tests_properties(example.${target}.clean PROPERTIES LABELS example
                       FIXTURES_SETUP ${target}_clean)
  set_tests_properties(example.${target} PROPERTIES ENVIRONMENT KILN_CACHE_DIR=${cache}
                       FIXTURES_REQUIRED ${target}_clean FIXTURES_SETUP ${target}_cold)
  set_tests_properties(example.${target}.warm PROPERTIES LABELS example TIMEOUT 120
                       ENVIRONMENT KILN_CACHE_DIR=${cache} FIXTURES_REQUIRED ${target}_cold)
  # Benchmarks run in kiln-bench-worker processes when it is built.
  if(TARGET kiln_bench_worker)
    add_dependencies(${target} kiln_bench_worker)
  endif()
endfunction()
