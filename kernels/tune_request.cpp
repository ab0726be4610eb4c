// Resolving a tuning request: the shipped kernel or the user's spec, the
// shape checked against its dims, the devices, and the reference.
#include "kiln/kernels/tune_request.hpp"

#include <charconv>

#include "kiln/backends/devices.hpp"
#include "kiln/core/error.hpp"
#include "kiln/kernels/kernel_description.hpp"
#include "kiln/kernels/shipped_kernels.hpp"

namespace kiln {

namespace {

// A host reference above this many flops would take seconds: the default
// config is the reference then (--reference host forces it).
constexpr double kHostReferenceFlops = 1e9;

[[noreturn]] void bad_request(std::string message) {
  throw Error(ErrorCode::kInvalidArgument, std::move(message));
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string example_shape(const std::vector<std::string>& dims) {
  std::string out;
  for (const auto& d : dims) out += (out.empty() ? "" : ",") + d + "=256";
  return out;
}

// Every dim given, and no other.
void check_dims(const ShapeDims& shape, const std::vector<std::string>& dims,
                const std::string& kernel) {
  for (const auto& [name, value] : shape) {
    if (std::find(dims.begin(), dims.end(), name) == dims.end()) {
      bad_request("--shape: " + kernel + " has no dimension '" + name + "' (it takes " +
                  join(dims) + ")");
    }
  }
  std::vector<std::string> missing;
  for (const auto& d : dims)
    if (!shape.count(d)) missing.push_back(d);
  if (!missing.empty()) {
    bad_request("--shape lacks " + join(missing) + ": " + kernel + " takes " + join(dims) +
                ", e.g. --shape " + example_shape(dims));
  }
}

std::vector<int> device_indices(const std::string& text, const std::string& backend) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (const DeviceRef& ref : parse_device_list(text, backend)) {
    if (ref.backend != backend) {
      bad_request("--devices: " + ref.to_string() + " is not a " + backend +
                  " device (this kernel runs on " + backend + ")");
    }
    // The CPU backend has one device (the host); CUDA indices are checked
    // against the driver's count when the target opens.
    if (ref.on_host() && ref.index != 0)
      bad_request("--devices " + text + ": this machine has 1 CPU device (0)");
    if (std::find(out.begin(), out.end(), ref.index) != out.end())
      bad_request("--devices " + text + ": " + ref.to_string() + " is named twice");
    out.push_back(ref.index);
  }
  return out;
}

void shipped_job(const TuneRequest& a, TuneJob& job) {
  std::optional<std::string> backend;
  if (a.backend != "auto") {
    backend = parse_backend_name(a.backend);
    if (!backend)
      bad_request("--backend " + a.backend + ": " + find_backend(a.backend).error().message);
  }
  std::optional<DType> dtype;
  if (!a.dtype.empty()) dtype = parse_dtype(a.dtype);
  auto resolved = resolve_shipped_kernel(a.kernel, backend, dtype);
  if (!resolved.ok()) throw Error(resolved.error());
  const ShippedKernel& k = **resolved;
  job.name = k.name;
  job.backend = k.backend;
  check_dims(job.shape, k.dims, k.name);
  job.dims = k.dims;
  if (Status fits = k.check_shape(job.shape); !fits.ok())
    bad_request("--shape: " + k.name + ": " + fits.error().message);
  const DType dt = dtype.value_or(k.dtypes.front());
  job.dtype = dtype_name(dt);
  job.kernel = k.kernel();
  job.args = k.args(dt);
  job.flops = k.flops(job.shape);
  job.bytes = k.bytes(job.shape);
  job.tolerance = k.tolerance(job.shape);
  const bool host =
      a.reference == "host" || (a.reference == "auto" && job.flops <= kHostReferenceFlops);
  if (host) {
    job.reference = ReferenceKind::kUser;
    job.reference_fn = k.reference;
    job.reference_text = "host code (double precision)";
  }
  if (k.backend == "cuda") {
    for (const auto& other : shipped_kernels())
      if (other.family == k.family && other.backend == "cpu") job.cpu_alternative = other.name;
  }
}

void user_job(const TuneRequest& a, TuneJob& job) {
  if (a.space_file.empty())
    bad_request("--template needs --space FILE.json describing the kernel (docs/user-kernels.md)");
  if (!a.dtype.empty())
    bad_request(
        "--dtype is for shipped kernels; a user kernel's dtypes are in its spec's \"args\"");
  if (a.reference == "host")
    bad_request(
        "--reference host is for shipped kernels; a user kernel's reference is in its spec");
  auto loaded = load_user_kernel(a.template_file, a.space_file, a.entry);
  if (!loaded.ok()) throw Error(loaded.error());  // turned into a value at the request's edge
  KernelDescription user = std::move(*loaded);
  job.name = user.tmpl.name;
  job.user = true;
  job.backend = user.backend;
  if (a.backend != "auto" && a.backend != user.backend) {
    bad_request("--backend " + a.backend + ": " + a.space_file + " describes a " + user.backend +
                " kernel (its \"backend\")");
  }
  check_dims(job.shape, user.dims, job.name);
  job.dims = user.dims;
  job.kernel = user.tunable(job.shape);
  job.args = user.args;
  job.reference = user.reference;
  job.tolerance = user.tolerance;
  if (user.reference == ReferenceKind::kNone) job.reference_text = "nothing (\"reference\": none)";
}

}  // namespace

ShapeDims parse_shape(const std::string& text) {
  ShapeDims dims;
  const std::string example = " (write NAME=VALUE pairs, e.g. --shape M=512,N=512,K=512)";
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = trim(std::string_view(text).substr(begin, end - begin));
    const auto eq = item.find('=');
    if (eq == std::string::npos) bad_request("--shape: '" + item + "' is not NAME=VALUE" + example);
    const std::string name = trim(std::string_view(item).substr(0, eq));
    const std::string value = trim(std::string_view(item).substr(eq + 1));
    if (name.empty()) bad_request("--shape: '" + item + "' has no name" + example);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range && ptr == value.data() + value.size() &&
        value[0] != '-') {
      bad_request("--shape: " + name + "=" + value + " is larger than any size (at most 2^63-1)");
    }
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || v < 1) {
      bad_request("--shape: " + name + "='" + value + "' is not a positive integer" + example);
    }
    if (!dims.emplace(name, v).second) bad_request("--shape: " + name + " is given twice");
    begin = end + 1;
  }
  return dims;
}

Result<TuneJob> resolve_tune_request(const TuneRequest& a) {
  try {
    if (!a.kernel.empty() && !a.template_file.empty())
      bad_request(
          "give either --kernel NAME (a shipped kernel: `kiln kernels` lists them) or "
          "--template FILE --space FILE.json (your own), not both");
    if (a.kernel.empty() && a.template_file.empty()) {
      if (!a.space_file.empty() || !a.entry.empty())
        bad_request(
            "--space and --entry describe your own kernel, whose source --template FILE "
            "gives: add --template FILE");
      bad_request(
          "nothing to tune: give --kernel NAME (a shipped kernel: `kiln kernels` lists them) or "
          "--template FILE --space FILE.json (your own)");
    }
    if (!a.kernel.empty() && (!a.space_file.empty() || !a.entry.empty()))
      bad_request(
          "--space and --entry describe a user kernel: use them with --template, not --kernel");
    TuneJob job;
    job.shape = parse_shape(a.shape);
    job.reference_text = "the default config";
    if (!a.kernel.empty())
      shipped_job(a, job);
    else
      user_job(a, job);
    if (job.backend == "cpu" && !cpu_backend_built()) {
      return make_error(ErrorCode::kUnavailable,
                        job.name +
                            " runs on the CPU backend, which this kiln was built without "
                            "(rebuild with KILN_WITH_LLVM=ON)");
    }
    job.devices = device_indices(a.devices, job.backend);
    // Every size of the call, checked before anything is opened, allocated
    // or cached: a shape whose tensors overflow, or whose dims do not fit
    // the kernel's scalar types, is bad input.
    (void)call_bytes(job.args, job.shape);
    return job;
  } catch (const Error& e) {
    return e.info();
  }
}

}  // namespace kiln
