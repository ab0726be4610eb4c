# Steps of the find_package example's test, each failing loudly with what it
# ran: (1) install the build tree into a scratch prefix, (2) configure the
# consumer project against it, (3) build it, (4) run it. A pass removes the
# scratch directory: under ASan the prefix and the consumer hold about 700 MB,
# and a CI disk has run out before now. A failure keeps it as evidence.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
step("configure" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
step("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
# The installed worker, not the build tree's: the consumer sees only the prefix.
set(ENV{KILN_WORKER} ${prefix}/libexec/kiln/kiln-bench-worker)
set(ENV{KILN_CACHE_DIR} ${WORK_DIR}/cache)
step("run" ${WORK_DIR}/build/kiln_consumer)
message(STATUS "${step_output}")
file(REMOVE_RECURSE ${WORK_DIR})
