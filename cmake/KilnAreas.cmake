# Adds every immediate subdirectory of the current source directory that has
# a CMakeLists.txt: lib/ and tests/ grow by areas (compile/, cache/, tuner/...)
# without a central list to edit.
function(kiln_add_areas)
  file(GLOB _areas LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(area IN LISTS _areas)
    if(IS_DIRECTORY ${area} AND EXISTS ${area}/CMakeLists.txt)
      add_subdirectory(${area})
    endif()
  endforeach()
endfunction()
