// Reading a file a user names as input: a kernel template, a space spec, a
// header under an include directory. Such a path can name anything: a
// directory, a FIFO, /dev/zero, a procfs file that blocks until the kernel
// logs something. A read is bounded, and never waits.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "kiln/core/error.hpp"

namespace kiln::internal {

// "a FIFO", "a character device", "a directory"... for st_mode's file type.
const char* file_type_name(mode_t mode);

// The bytes of `path`, a regular file of at most `max_bytes`. `what` names
// the file in errors ("template file"). kNotFound when it cannot be opened;
// kInvalidArgument for a directory or anything but a regular file, one
// larger than the cap, or one whose read would block (procfs, sysfs).
Result<std::string> read_input_file(const std::filesystem::path& path, const std::string& what,
                                    std::uint64_t max_bytes);

}  // namespace kiln::internal
