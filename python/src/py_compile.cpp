// kiln.compile: source text in, a launchable kernel out, from the artifact
// cache when it holds one (the DSL runtime: a DSL that generates source
// strings embeds Kiln with this alone).
#include <unistd.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "kiln/core/hash.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/artifact_source.hpp"
#include "py_args.hpp"
#include "py_gil.hpp"
#include "py_launch.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// Braces in text that must reach the compiler as written (Kiln's patterns
// read `{NAME}` as a placeholder).
std::string escape_braces(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
  return out;
}

// "saxpy" of "ns::saxpy<4>(...)": the kernel's name when none is given.
std::string name_of_entry(const std::string& entry) {
  std::string head = entry.substr(0, entry.find_first_of("<( "));
  if (auto p = head.rfind("::"); p != std::string::npos) head = head.substr(p + 2);
  return head.empty() ? "kernel" : head;
}

class CompiledKernel {
 public:
  CompiledKernel(std::string kind, TunableKernel kernel,
                 std::optional<std::vector<KernelParam>> params)
      : kind_(kind), kernel_(std::move(kernel)), params_(std::move(params)) {}

  // Compiles (or finds in the cache) and loads; without the GIL.
  void build() {
    rt_ = runtime(kind_);
    const CompileContext context{rt_->target.backend.toolchain,
                                 CacheEnvRegistry::global().snapshot()};
    bool from_cache = false;
    auto artifact = internal::compile_config(kernel_, Config{}, rt_->target.backend, context,
                                             rt_->artifacts.get(), &from_cache);
    if (!artifact.ok()) throw Error(artifact.error());
    artifact_ = std::move(*artifact);
    from_cache_ = from_cache;
    load();
  }

  // A DLPack export, a stream's __cuda_stream__ run on this thread: see
  // calling_python.
  void call(nb::args args, nb::kwargs kwargs) {
    calling_python([&] {
      nb::object grid = nb::int_(1), block = nb::int_(1), shared_bytes = nb::int_(0),
                 stream = nb::none();
      const std::pair<const char*, nb::object*> keywords[] = {
          {"grid", &grid}, {"block", &block}, {"shared_bytes", &shared_bytes}, {"stream", &stream}};
      for (auto [k, v] : kwargs) {
        const std::string name = nb::cast<std::string>(nb::str(k));
        bool known = false;
        for (auto& [kw, slot] : keywords) {
          if (name != kw) continue;
          *slot = nb::borrow(v);
          known = true;
        }
        if (!known) {
          throw Error(ErrorCode::kInvalidArgument,
                      kernel_.tmpl.name + " got the keyword argument '" + name +
                          "': a kernel's arguments are positional, in signature order; the "
                          "keywords are grid=, block=, shared_bytes= and stream=");
        }
      }
      call_here(args, grid, block, shared_bytes, stream);
    });
  }

  void call_here(nb::args args, nb::handle grid, nb::handle block, nb::handle shared_bytes,
                 nb::handle stream) {
    if (pid_ != ::getpid()) {  // a forked child: this process's runtime, loaded again
      GilRelease release;
      rt_ = runtime(kind_);
      load();
    }
    LaunchConfig lc;
    lc.grid = to_dim3(grid, "grid", /*empty_ok=*/true);
    lc.block = to_dim3(block, "block");
    lc.shared_bytes = to_shared_bytes(shared_bytes);
    KernelArgs packed;
    if (params_) {
      CallArgs converted = convert_args(*params_, {}, args, kernel_.tmpl.name.c_str());
      packed = pack(converted.args);
    } else {
      packed = infer_and_pack(args, kernel_.tmpl.name.c_str());
    }
    if (empty_grid(lc.grid)) return;  // the arguments are checked; there is nothing to run
    std::optional<Stream> s = to_stream(rt_->device(), stream, args);
    lc.stream = s ? &*s : nullptr;
    Status st = ok_status();
    {
      GilRelease release;
      st = rt_->device().launch(loaded_, lc, packed);
    }
    check(st);
  }

  const std::string& name() const { return kernel_.tmpl.name; }
  const std::string& entry() const { return artifact_.entry; }
  bool from_cache() const { return from_cache_; }
  const std::string& backend() const { return kind_; }
  std::size_t binary_bytes() const { return artifact_.binary ? artifact_.binary->size() : 0; }

 private:
  void load() {
    auto loaded = rt_->device().load(artifact_);
    if (!loaded.ok()) throw Error(loaded.error());
    loaded_ = std::move(*loaded);
    pid_ = ::getpid();
  }

  std::string kind_;
  TunableKernel kernel_;
  std::optional<std::vector<KernelParam>> params_;
  std::shared_ptr<Runtime> rt_;
  Artifact artifact_;
  LoadedKernel loaded_;
  bool from_cache_ = false;
  pid_t pid_ = 0;
};

}  // namespace

void register_compile(nb::module_& m) {
  nb::class_<CompiledKernel>(m, "CompiledKernel",
                             "A compiled kernel, launched by calling it: "
                             "kernel(*args, grid=, block=, shared_bytes=, stream=).")
      .def("__call__", &CompiledKernel::call, nb::arg("args"), nb::arg("kwargs"))
      .def_prop_ro("name", &CompiledKernel::name)
      .def_prop_ro("entry", &CompiledKernel::entry)
      .def_prop_ro("backend", &CompiledKernel::backend)
      .def_prop_ro("from_cache", &CompiledKernel::from_cache,
                   "True when the artifact cache held the code (nothing was compiled).")
      .def_prop_ro("binary_bytes", &CompiledKernel::binary_bytes)
      .def("__repr__", [](const CompiledKernel& k) {
        return "<kiln.CompiledKernel " + k.name() + " (" + k.entry() + ") on " + k.backend() +
               (k.from_cache() ? ", from the cache>" : ">");
      });

  m.def(
      "_compile",
      [](const std::string& source, const std::string& entry, const std::string& backend,
         const std::vector<std::string>& options, const std::map<std::string, std::string>& headers,
         const std::optional<std::string>& name,
         const std::optional<std::vector<std::string>>& signature) {
        TunableKernel k;
        k.tmpl.name = name ? *name : name_of_entry(entry);
        k.tmpl.source = source;
        k.tmpl.entry = escape_braces(entry);
        for (const auto& o : options) k.tmpl.options.push_back(escape_braces(o));
        for (const auto& [n, c] : headers) k.tmpl.headers.push_back(Header{n, c});
        std::optional<std::vector<KernelParam>> params;
        if (signature) params = parse_signature(*signature);
        const std::string kind = parse_backend(backend);
        auto kernel = std::make_unique<CompiledKernel>(kind, std::move(k), std::move(params));
        {
          GilRelease release;
          kernel->build();
        }
        return kernel;
      },
      nb::arg("source"), nb::arg("entry"), nb::arg("backend"), nb::arg("options"),
      nb::arg("headers"), nb::arg("name").none(), nb::arg("signature").none());
  // kiln.Kernel's names of its arguments, its signature checked where it
  // is written.
  m.def("_signature_names", [](const std::vector<std::string>& signature) {
    std::vector<std::string> names;
    for (const auto& p : parse_signature(signature)) names.push_back(p.name);
    return names;
  });
  // The digest of byte strings (each a field of its own), for a hook's code
  // in the kernel's version: Python's hashlib would load OpenSSL, 3 ms of a
  // warm process's first call.
  m.def("_digest", [](const std::vector<nb::bytes>& parts) {
    Hasher h;
    for (const auto& p : parts) h.field(std::string_view(p.c_str(), p.size()));
    return h.finish().hex();
  });
}

}  // namespace kiln::py
