# Shared by the build-time generator scripts (cmake -P): writes `content` to
# `path` only when it differs, so regenerating an unchanged file rebuilds
# nothing that depends on it.
function(kiln_write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" _old)
    if(_old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()
