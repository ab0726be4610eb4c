// The source the CPU compiler builds around a kernel template: a prelude
// header (the BlockContext a kernel receives and the glue that calls it with
// a typed argument list) and a main file that instantiates each entry of a
// CompileUnit and exports it under a C name. No LLVM here.
#pragma once

#include <string>

#include "kiln/compile/compile.hpp"

namespace kiln::cpu {

// The prelude's include name: kernel sources write #include "kiln/cpu_kernel.h".
inline constexpr const char* kPreludeHeader = "kiln/cpu_kernel.h";
const char* prelude_source();

// extern "C" symbol of entry `index`: "kiln_entry_3", and of its signature.
std::string entry_symbol(std::size_t index);
std::string signature_symbol(std::size_t index);

// The main file: includes the prelude and `source_name` (the template's
// source, served as its own file so diagnostics point at its lines), then
// one exported wrapper and one signature per specialization.
std::string unit_main_source(const CompileUnit& unit, const std::string& source_name);

}  // namespace kiln::cpu
