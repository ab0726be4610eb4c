#include "clang_prelude.hpp"

namespace kiln::cpu {

// NOTES: no standard headers here, so the prelude costs the front end
// nothing; the index sequence comes from Clang's __make_integer_seq.
const char* prelude_source() {
  return R"(#pragma once
namespace kiln::cpu {

struct Dim3 { unsigned x, y, z; };

// One block of a launch: its index, the grid and block shapes, and the
// block's dynamic shared memory (scratch private to the worker running it).
// Mirrors backends/cpu/runtime/cpu_abi.hpp byte for byte.
struct BlockContext {
  Dim3 block_idx;
  Dim3 grid_dim;
  Dim3 block_dim;
  void* shared;
  unsigned long shared_bytes;
};

namespace detail {
// Mirrors kiln::ArgType.
template <class T> struct ArgCode {
  static_assert(sizeof(T) == 0, "Kiln CPU kernels take pointers, bool, 32/64-bit integers, "
                                "float and double after the BlockContext");
};
template <class T> struct ArgCode<T*> { static constexpr unsigned char value = 0; };
template <> struct ArgCode<bool> { static constexpr unsigned char value = 1; };
template <> struct ArgCode<int> { static constexpr unsigned char value = 2; };
template <> struct ArgCode<unsigned> { static constexpr unsigned char value = 3; };
template <> struct ArgCode<long> { static constexpr unsigned char value = 4; };
template <> struct ArgCode<long long> { static constexpr unsigned char value = 4; };
template <> struct ArgCode<unsigned long> { static constexpr unsigned char value = 5; };
template <> struct ArgCode<unsigned long long> { static constexpr unsigned char value = 5; };
template <> struct ArgCode<float> { static constexpr unsigned char value = 6; };
template <> struct ArgCode<double> { static constexpr unsigned char value = 7; };

struct Signature { unsigned char count; unsigned char types[63]; };

template <class... P>
constexpr Signature signature_of(void (*)(const BlockContext&, P...)) {
  static_assert(sizeof...(P) <= 63, "at most 63 kernel arguments");
  Signature s{};
  s.count = sizeof...(P);
  unsigned char codes[] = {ArgCode<P>::value..., 0};
  for (unsigned i = 0; i < sizeof...(P); ++i) s.types[i] = codes[i];
  return s;
}

template <class T, T... I> struct Seq {};

template <class... P, unsigned long... I>
inline void call(void (*f)(const BlockContext&, P...), const BlockContext* ctx,
                 void* const* args, Seq<unsigned long, I...>) {
  f(*ctx, *static_cast<P*>(args[I])...);
}

template <class... P>
inline void invoke(void (*f)(const BlockContext&, P...), const BlockContext* ctx,
                   void* const* args) {
  call(f, ctx, args, __make_integer_seq<Seq, unsigned long, sizeof...(P)>{});
}
}  // namespace detail
}  // namespace kiln::cpu
)";
}

std::string entry_symbol(std::size_t index) {
  return "kiln_entry_" + std::to_string(index);
}

std::string signature_symbol(std::size_t index) {
  return "kiln_signature_" + std::to_string(index);
}

std::string unit_main_source(const CompileUnit& unit, const std::string& source_name) {
  std::string out =
      "#include \"" + std::string(kPreludeHeader) + "\"\n#include \"" + source_name + "\"\n\n";
  for (std::size_t i = 0; i < unit.specializations.size(); ++i) {
    const std::string& entry = unit.specializations[i].entry;
    // Taking the entry's address instantiates it; a kernel whose first
    // parameter is not the BlockContext fails here, naming the entry.
    out += "extern \"C\" void " + entry_symbol(i) +
           "(const kiln::cpu::BlockContext* ctx, void* const* args) {\n"
           "  kiln::cpu::detail::invoke(&" +
           entry + ", ctx, args);\n}\n";
    out += "extern \"C\" const kiln::cpu::detail::Signature " + signature_symbol(i) +
           " = kiln::cpu::detail::signature_of(&" + entry + ");\n";
  }
  return out;
}

}  // namespace kiln::cpu
