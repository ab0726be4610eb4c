// See py_args.hpp.
#include "py_args.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <limits>

#include "kiln/core/error.hpp"
#include "py_dlpack.hpp"
#include "py_gil.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// An argument that does not match the signature: kiln.ArgumentError.
[[noreturn]] void argument_error(std::string message, const std::string& name) {
  ErrorInfo info{ErrorCode::kInvalidArgument, std::move(message), {}};
  info.details["kind"] = "argument";
  if (!name.empty()) info.details["argument"] = name;
  throw Error(std::move(info));
}

[[noreturn]] void bad_arg(const char* kernel, const KernelParam& p, const std::string& why) {
  argument_error(std::string(kernel) + ": argument '" + p.name + "' (" + p.type_text + "): " + why,
                 p.name);
}

void append(std::string& key, const void* p, std::size_t n) {
  key.append(static_cast<const char*>(p), n);
}

// Why a tensor cannot be passed as a bare pointer, or empty. A kernel
// indexes forward from the pointer it gets: with a negative stride (x[::-1])
// that pointer is the highest address, and the kernel reads and writes past
// the end of the buffer.
std::string negative_stride(const TensorArg& t) {
  for (std::size_t i = 0; i < t.strides.size(); ++i) {
    if (t.strides[i] < 0 && t.shape[i] > 1) {
      return "dim " + std::to_string(i) + " has the negative stride " +
             std::to_string(t.strides[i]) +
             ", and a kernel indexes forward from its pointer: pass a copy "
             "(np.ascontiguousarray(x), x.contiguous())";
    }
  }
  return {};
}

// An address or a byte count: a Python int from 0 to 2^64-1 (nb::cast
// would throw a bare std::bad_cast for a negative or larger one).
std::optional<std::uintptr_t> as_u64(nb::handle obj) {
  std::uintptr_t v = 0;
  if (!nb::isinstance<nb::int_>(obj) || !nb::try_cast(obj, v, false)) return std::nullopt;
  return v;
}

// (address, bytes): nullopt when `obj` is not a pair of ints; an error
// naming `what` when it is one with a negative or oversized member.
std::optional<std::pair<std::uintptr_t, std::size_t>> as_sized_pointer(nb::handle obj,
                                                                       const std::string& what) {
  if (!nb::isinstance<nb::tuple>(obj)) return std::nullopt;
  nb::tuple t = nb::borrow<nb::tuple>(obj);
  if (t.size() != 2 || !nb::isinstance<nb::int_>(t[0]) || !nb::isinstance<nb::int_>(t[1])) {
    return std::nullopt;
  }
  auto address = as_u64(t[0]);
  auto bytes = as_u64(t[1]);
  if (!address || !bytes) {
    argument_error(what + " is the pair " + nb::cast<std::string>(nb::repr(obj)) +
                       ": an (address, bytes) pair holds two integers from 0 to 2^64-1",
                   "");
  }
  return std::make_pair(*address, static_cast<std::size_t>(*bytes));
}

template <class T>
T checked_int(nb::handle obj, const char* kernel, const KernelParam& p) {
  if (nb::isinstance<nb::bool_>(obj) || nb::isinstance<nb::float_>(obj)) {
    bad_arg(kernel, p, std::string("expected an integer, got ") + nb::inst_name(obj).c_str());
  }
  if (!PyIndex_Check(obj.ptr())) {
    bad_arg(kernel, p, std::string("expected an integer, got ") + nb::inst_name(obj).c_str());
  }
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    bad_arg(kernel, p, "not an integer");
  }
  T value{};
  if (!nb::try_cast(index, value, false)) {
    PyErr_Clear();
    bad_arg(kernel, p,
            nb::cast<std::string>(nb::str(index)) + " does not fit in " + p.type_text + " (" +
                std::to_string(std::numeric_limits<T>::min()) + ".." +
                std::to_string(std::numeric_limits<T>::max()) + ")");
  }
  return value;
}

double checked_float(nb::handle obj, const char* kernel, const KernelParam& p) {
  if (nb::isinstance<nb::bool_>(obj)) bad_arg(kernel, p, "expected a number, got bool");
  const double v = PyFloat_AsDouble(obj.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    bad_arg(kernel, p, std::string("expected a number, got ") + nb::inst_name(obj).c_str());
  }
  return v;
}

}  // namespace

// A read-only array where the signature says the kernel may write (T*, not
// const T*): Kiln cannot see whether the kernel writes it, and a write
// would change memory Python holds immutable (a bytes object's), so the
// call goes on with a kiln.ReadOnlyWarning naming the fix.
void warn_read_only(const char* kernel, const KernelParam& p) {
  static PyObject* category = [] {
    nb::object c = nb::module_::import_("kiln.errors").attr("ReadOnlyWarning");
    return c.release().ptr();  // kept for the process: a warning may come at any call
  }();
  const std::string message =
      std::string(kernel) + ": argument '" + p.name +
      "' is a read-only array, and the signature declares it " + p.type_text +
      ", which the kernel may write: declare it '" + p.name + ": const " + p.type_text +
      "' if the kernel only reads it, or pass a writable array (" + p.name + ".copy())";
  if (PyErr_WarnEx(category, message.c_str(), 1) != 0) throw nb::python_error();
}

namespace {

// A JAX array where the kernel may write (a T*, not const T*, or a name
// of outputs=) or Kiln writes it (restore_value, reset_to_zero) is
// refused before anything runs: writing it would change an immutable
// array, and every array JAX lets share its buffer. `why` says why it is
// written, kOutputs or a role; "" is the signature's T*. The message is
// built only for the error: the warm path of every call passes here.
constexpr const char* kOutputs = "it is named in outputs=";
void refuse_jax_output(nb::handle obj, const KernelParam& p, const char* kernel, const char* why) {
  if (!is_jax_array(obj)) return;
  const bool by_signature = *why == '\0';
  const std::string because =
      by_signature ? "the signature declares it " + p.type_text + ", not const " + p.type_text
                   : why;
  const std::string or_else = by_signature ? ", or declare it '" + p.name + ": const " +
                                                 p.type_text + "' if the kernel only reads it"
                              : why == kOutputs
                                  ? ", or drop it from outputs= if the kernel only reads it"
                                  : "";
  bad_arg(kernel, p,
          "a JAX array, and the kernel may write this argument (" + because +
              "), but JAX arrays are immutable: pass a numpy array for it (np.array(" + p.name +
              ")) and give the result to JAX after the call (jax.numpy.from_dlpack(" + p.name +
              ") shares its memory)" + or_else);
}

// Why the kernel may write parameter `i` (refuse_jax_output's `why`);
// nullptr when it only reads it.
const char* why_written(const KernelParam& p, const std::vector<bool>& named_outputs,
                        std::size_t i) {
  if (i < named_outputs.size() && named_outputs[i]) return kOutputs;
  return p.read_only ? nullptr : "";
}

// A tensor argument: dtype, strides, writability and device checked; its
// dtype, shape and stride pattern enter the key.
void convert_tensor(nb::handle obj, const KernelParam& p, const char* kernel, CallArgs& out,
                    const ParamBuckets& buckets, std::size_t index, const char* written) {
  auto t = as_tensor(obj);
  if (!t) {
    bad_arg(kernel, p,
            std::string("expected a tensor (an object with __dlpack__ or the "
                        "buffer protocol), got ") +
                nb::inst_name(obj).c_str());
  }
  if (!t->dtype || *t->dtype != p.dtype) {
    bad_arg(kernel, p,
            std::string("the tensor's dtype is ") +
                (t->dtype ? dtype_name(*t->dtype) : t->dtype_text.c_str()) +
                ", the signature says " + dtype_name(p.dtype) +
                ": convert it (x.astype / x.to) or fix the signature");
  }
  if (std::string why = negative_stride(t->info); !why.empty()) bad_arg(kernel, p, why);
  if (written) refuse_jax_output(obj, p, kernel, written);
  // Inferred params (written null) know no const to declare: no warning.
  if (written && !p.read_only && (t->read_only || read_only_buffer(obj))) warn_read_only(kernel, p);
  if (out.any_tensor && !(t->info.device == out.device)) {
    bad_arg(kernel, p,
            "on " + t->info.device.to_string() + " while earlier tensors are on " +
                out.device.to_string() + ": every tensor of a call on one device");
  }
  out.device = t->info.device;
  out.any_tensor = true;
  const auto d = static_cast<std::uint8_t>(p.dtype);
  append(out.key, &d, 1);
  const auto rank = static_cast<std::uint32_t>(t->info.shape.size());
  append(out.key, &rank, sizeof rank);
  if (index < buckets.size() && !buckets[index].empty()) {
    for (std::uint32_t d = 0; d < rank; ++d) {
      const std::int64_t v = key_size(buckets, index, static_cast<int>(d), t->info.shape[d]);
      append(out.key, &v, sizeof v);
    }
  } else {
    append(out.key, t->info.shape.data(), rank * sizeof(std::int64_t));
  }
  for (auto s : stride_pattern(t->info)) append(out.key, &s, 1);
  out.args.push_back(Arg::of_tensor(p.name, t->data, std::move(t->info)));
}

// A raw pointer: an (address, bytes) pair, an address, or a tensor's
// memory with its extent.
Arg convert_pointer(nb::handle obj, const KernelParam& p, const char* kernel, const char* written) {
  if (auto sized = as_sized_pointer(
          obj, std::string(kernel) + ": argument '" + p.name + "' (" + p.type_text + ")"))
    return Arg::of_pointer(p.name, reinterpret_cast<const void*>(sized->first), sized->second);
  if (nb::isinstance<nb::int_>(obj)) {
    auto address = as_u64(obj);
    if (!address) {
      bad_arg(kernel, p,
              nb::cast<std::string>(nb::repr(obj)) +
                  " is not an address: an address is an integer from 0 to 2^64-1");
    }
    return Arg::of_scalar(p.name, reinterpret_cast<void*>(*address));
  }
  if (auto t = as_tensor(obj)) {
    if (std::string why = negative_stride(t->info); !why.empty()) bad_arg(kernel, p, why);
    if (written) refuse_jax_output(obj, p, kernel, written);
    const std::size_t bytes = static_cast<std::size_t>(t->info.storage_bytes(p.name));
    return Arg::of_pointer(p.name, t->data, bytes);
  }
  bad_arg(kernel, p,
          std::string("expected an address (int), an (address, bytes) pair or a tensor, got ") +
              nb::inst_name(obj).c_str());
}

// A scalar of the declared C type, range-checked.
Arg convert_scalar(nb::handle obj, const KernelParam& p, const char* kernel, bool in_key) {
  switch (p.scalar) {
    case ArgType::kF32:
      return Arg::of_scalar(p.name, static_cast<float>(checked_float(obj, kernel, p)), in_key);
    case ArgType::kF64:
      return Arg::of_scalar(p.name, checked_float(obj, kernel, p), in_key);
    case ArgType::kI32:
      return Arg::of_scalar(p.name, checked_int<std::int32_t>(obj, kernel, p), in_key);
    case ArgType::kI64:
      return Arg::of_scalar(p.name, checked_int<std::int64_t>(obj, kernel, p), in_key);
    case ArgType::kU32:
      return Arg::of_scalar(p.name, checked_int<std::uint32_t>(obj, kernel, p), in_key);
    case ArgType::kU64:
      return Arg::of_scalar(p.name, checked_int<std::uint64_t>(obj, kernel, p), in_key);
    case ArgType::kBool:
      if (!nb::isinstance<nb::bool_>(obj) && !PyIndex_Check(obj.ptr())) {
        bad_arg(kernel, p, std::string("expected a bool, got ") + nb::inst_name(obj).c_str());
      }
      return Arg::of_scalar(p.name, PyObject_IsTrue(obj.ptr()) == 1, in_key);
    case ArgType::kPointer:
      break;
  }
  return Arg();
}

// A bucketed scalar's value (an integer: read_kernel_spec checks).
constexpr auto as_int64 = [](auto x) -> std::int64_t {
  if constexpr (std::is_arithmetic_v<decltype(x)>) {
    return static_cast<std::int64_t>(x);
  } else {
    return 0;
  }
};

}  // namespace

std::int64_t key_size(const ParamBuckets& buckets, std::size_t i, int dim, std::int64_t v) {
  if (i >= buckets.size()) return v;
  for (const auto& [d, b] : buckets[i])
    if (d == dim) return b->rule.representative(v, "the bucket rule on '" + b->name() + "'");
  return v;
}

CallArgs convert_args(const std::vector<KernelParam>& params, const std::vector<bool>& key_mask,
                      nb::handle args, const char* kernel, const ParamBuckets& buckets,
                      const std::vector<bool>& named_outputs, bool inferred) {
  const std::size_t n = nb::len(args);
  if (n != params.size()) {
    std::string names;
    for (const auto& p : params) names += (names.empty() ? "" : ", ") + p.name;
    argument_error(std::string(kernel) + " takes " + std::to_string(params.size()) +
                       " arguments (" + names + "), got " + std::to_string(n),
                   "");
  }
  CallArgs out;
  out.args.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const KernelParam& p = params[i];
    nb::handle obj = args[i];
    switch (p.kind) {
      case KernelParam::Kind::kTensor:
        convert_tensor(obj, p, kernel, out, buckets, i,
                       inferred ? nullptr : why_written(p, named_outputs, i));
        break;
      case KernelParam::Kind::kPointer:
        out.args.push_back(
            convert_pointer(obj, p, kernel, inferred ? nullptr : why_written(p, named_outputs, i)));
        break;
      case KernelParam::Kind::kScalar: {
        const bool in_key = key_mask.size() > i && key_mask[i];
        Arg a = convert_scalar(obj, p, kernel, in_key);
        if (in_key && i < buckets.size() && !buckets[i].empty()) {
          // A bucketed scalar is an integer (read_kernel_spec checks).
          const std::int64_t v = key_size(buckets, i, -1, std::visit(as_int64, a.scalar));
          append(out.key, &v, sizeof v);
        } else if (in_key) {
          std::visit([&](auto v) { append(out.key, &v, sizeof v); }, a.scalar);
        }
        out.args.push_back(std::move(a));
        break;
      }
    }
  }
  return out;
}

KernelArgs infer_and_pack(nb::handle args, const char* kernel) {
  KernelArgs out;
  const std::size_t n = nb::len(args);
  for (std::size_t i = 0; i < n; ++i) {
    nb::handle obj = args[i];
    const std::string type_name = Py_TYPE(obj.ptr())->tp_name;
    // NOTES: numpy's other objects (an np.dtype) have no dtype and item;
    // they reach the error below.
    if (type_name.rfind("numpy.", 0) == 0 && type_name != "numpy.ndarray" &&
        nb::hasattr(obj, "dtype") && nb::hasattr(obj, "item")) {
      // A numpy scalar (np.float64 is also a float, np.int64 maybe an int):
      // its own width, checked before the Python types.
      // NOTES: nb::str(obj.attr(...)) would check that the attribute *is* a
      // str (and throw a bare std::bad_cast); str() of the dtype object is
      // wanted.
      const std::string dt = nb::str(nb::handle(obj.attr("dtype"))).c_str();
      nb::object v = obj.attr("item")();
      if (dt == "float32")
        out.add(nb::cast<float>(v));
      else if (dt == "float64")
        out.add(nb::cast<double>(v));
      else if (dt == "int32")
        out.add(nb::cast<std::int32_t>(v));
      else if (dt == "int64")
        out.add(nb::cast<std::int64_t>(v));
      else if (dt == "uint32")
        out.add(nb::cast<std::uint32_t>(v));
      else if (dt == "uint64")
        out.add(nb::cast<std::uint64_t>(v));
      else if (dt == "bool")
        out.add(nb::cast<bool>(v));
      else {
        throw Error(ErrorCode::kInvalidArgument,
                    std::string(kernel) + ": argument " + std::to_string(i) + " is a " + dt +
                        " scalar, which no kernel parameter takes: pass a Python int or "
                        "float, or give kiln.compile a signature");
      }
    } else if (nb::isinstance<nb::bool_>(obj)) {
      out.add(obj.ptr() == Py_True);
    } else if (nb::isinstance<nb::int_>(obj)) {
      long long v = 0;
      if (nb::try_cast(obj, v, false) && v >= std::numeric_limits<std::int32_t>::min() &&
          v <= std::numeric_limits<std::int32_t>::max()) {
        out.add(static_cast<std::int32_t>(v));
      } else if (nb::try_cast(obj, v, false)) {
        out.add(static_cast<std::int64_t>(v));
      } else if (std::uint64_t u = 0; nb::try_cast(obj, u, false)) {
        out.add(u);
      } else {
        argument_error(std::string(kernel) + ": argument " + std::to_string(i) + " is " +
                           nb::cast<std::string>(nb::repr(obj)) +
                           ", which fits no kernel parameter (64 bits at most): pass a smaller "
                           "value",
                       "");
      }
    } else if (nb::isinstance<nb::float_>(obj)) {
      out.add(static_cast<float>(nb::cast<double>(obj)));
    } else if (auto sized =
                   as_sized_pointer(obj, std::string(kernel) + ": argument " + std::to_string(i))) {
      out.add(reinterpret_cast<void*>(sized->first));
    } else if (auto t = as_tensor(obj)) {
      if (std::string why = negative_stride(t->info); !why.empty()) {
        argument_error(std::string(kernel) + ": argument " + std::to_string(i) + ": " + why, "");
      }
      out.add(t->data);
    } else {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(kernel) + ": argument " + std::to_string(i) + " is a " +
                      nb::inst_name(obj).c_str() +
                      ": pass a tensor (DLPack), a number, a bool or an (address, bytes) pair");
    }
  }
  return out;
}

std::optional<std::uintptr_t> stream_handle(nb::handle stream) {
  if (stream.is_none()) return std::nullopt;
  auto handle_of = [&](nb::handle h) -> std::uintptr_t {
    if (auto v = as_u64(h)) return *v;
    throw Error(ErrorCode::kInvalidArgument,
                "stream=" + nb::cast<std::string>(nb::repr(stream)) + " gives the handle " +
                    nb::cast<std::string>(nb::repr(h)) +
                    ": a stream handle is an integer from 0 to 2^64-1");
  };
  if (nb::isinstance<nb::int_>(stream)) return handle_of(stream);
  if (nb::hasattr(stream, "__cuda_stream__")) {
    nb::object s = stream.attr("__cuda_stream__")();
    // The CUDA stream protocol: (version, handle).
    if (nb::isinstance<nb::tuple>(s) && nb::len(s) == 2) return handle_of(s[1]);
    return handle_of(s);
  }
  if (nb::hasattr(stream, "cuda_stream")) return handle_of(stream.attr("cuda_stream"));
  throw Error(ErrorCode::kInvalidArgument,
              std::string("stream=") + nb::inst_name(stream).c_str() +
                  " is not a stream: pass an int handle or an object with cuda_stream or "
                  "__cuda_stream__");
}

void check_writable(nb::handle obj, const KernelParam& p, const char* kernel, const char* role) {
  refuse_jax_output(obj, p, kernel, (std::string("Kiln writes it: ") + role).c_str());
  nb::ndarray<nb::ro> read;
  nb::ndarray<> write;
  if (!nb::try_cast(obj, read, false) || nb::try_cast(obj, write, false)) return;
  bad_arg(kernel, p,
          std::string("the array is read-only, and this argument is written (") + role +
              "): pass a writable array (x.copy(), or np.require(x, requirements='W'))");
}

}  // namespace kiln::py
