// See py_dlpack.hpp.
#include "py_dlpack.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "py_gil.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// The DLPack types Kiln has a DType for (one lane each).
struct KnownDtype {
  nb::dlpack::dtype_code code;
  std::uint8_t bits;
  DType dtype;
};
constexpr KnownDtype kKnownDtypes[] = {
    {nb::dlpack::dtype_code::Float, 16, DType::kF16},
    {nb::dlpack::dtype_code::Float, 32, DType::kF32},
    {nb::dlpack::dtype_code::Float, 64, DType::kF64},
    {nb::dlpack::dtype_code::Bfloat, 16, DType::kBF16},
    {nb::dlpack::dtype_code::Int, 8, DType::kI8},
    {nb::dlpack::dtype_code::Int, 16, DType::kI16},
    {nb::dlpack::dtype_code::Int, 32, DType::kI32},
    {nb::dlpack::dtype_code::Int, 64, DType::kI64},
    {nb::dlpack::dtype_code::UInt, 8, DType::kU8},
    {nb::dlpack::dtype_code::Bool, 8, DType::kBool},
};

std::optional<DType> dtype_of(const nb::dlpack::dtype& t) {
  if (t.lanes != 1) return std::nullopt;
  for (const auto& k : kKnownDtypes)
    if (static_cast<std::uint8_t>(k.code) == t.code && k.bits == t.bits) return k.dtype;
  return std::nullopt;
}

// A DLPack dtype as numpy names it ("uint16", "float8x4" for 4 lanes).
std::string dlpack_dtype_name(nb::dlpack::dtype dt) {
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(dt.code);
  std::string name = code == C::Int       ? "int"
                     : code == C::UInt    ? "uint"
                     : code == C::Float   ? "float"
                     : code == C::Bfloat  ? "bfloat"
                     : code == C::Complex ? "complex"
                     : code == C::Bool    ? "bool"
                                          : "dlpack code " + std::to_string(dt.code) + " of ";
  name += std::to_string(dt.bits);
  if (dt.lanes != 1) name += "x" + std::to_string(dt.lanes);
  return name;
}

// dlpack.h's DLManagedTensor (a "dltensor" capsule) and DLPack 1.x's
// DLManagedTensorVersioned ("dltensor_versioned", with the flags).
struct ManagedLegacy {
  nb::dlpack::dltensor tensor;
  void* manager_ctx;
  void (*deleter)(void*);
};
struct ManagedVersioned {
  std::uint32_t major, minor;
  void* manager_ctx;
  void (*deleter)(void*);
  std::uint64_t flags;
  nb::dlpack::dltensor tensor;
};
constexpr std::uint64_t kDlpackReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY

// obj.__dlpack__(max_version=(1, 1)), the array API's DLPack 1.x export,
// whose versioned capsule carries the read-only flag; a producer that
// predates max_version raises TypeError and is asked the legacy way,
// __dlpack__(). nanobind 3.1.0 asks the legacy way first for a read-only
// nb::ndarray<nb::ro> (the cheaper capsule), so it never sees the flag.
// An invalid object when there is no __dlpack__ or the export fails: the
// caller then leaves the object to nanobind (the buffer protocol).
nb::object dlpack_capsule(nb::handle obj) {
  static PyObject* const name = PyUnicode_InternFromString("__dlpack__");
  static PyObject* const kwnames = Py_BuildValue("(s)", "max_version");
  static PyObject* const version =
      Py_BuildValue("(II)", nb::dlpack::major_version, nb::dlpack::minor_version);
  PyObject* args[] = {obj.ptr(), version};  // self, then max_version's value
  PyObject* capsule = PyObject_VectorcallMethod(name, args, 1, kwnames);
  if (!capsule && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = PyObject_VectorcallMethod(name, args, 1, nullptr);
  }
  if (!capsule) PyErr_Clear();
  return nb::steal(capsule);
}

// A tensor's fields (strides in elements; none: row-major).
DlpackTensor from_fields(void* data, nb::dlpack::dtype dt, std::size_t ndim,
                         const std::int64_t* shape, const std::int64_t* strides, int device_type,
                         int device_id) {
  DlpackTensor t;
  t.data = data;
  t.dtype = dtype_of(dt);
  t.dtype_text = dlpack_dtype_name(dt);
  t.info.dtype = t.dtype.value_or(DType::kU8);
  t.info.shape.assign(shape, shape + ndim);
  t.info.strides.resize(ndim);
  std::int64_t dense = 1;
  for (std::size_t i = ndim; i-- > 0;) {
    t.info.strides[i] = strides ? strides[i] : dense;
    dense *= shape[i];
  }
  if (device_type == nb::device::cuda::value) {
    t.info.device = DeviceRef{"cuda", device_id};
  } else {
    t.info.device = DeviceRef{"cpu", 0};  // cpu, cuda_host, cuda_managed
  }
  return t;
}

// The tensor of a capsule `__dlpack__` returned, read in place: the
// capsule is left unconsumed, so its destructor hands it back to the
// producer (the array API's rule), and the memory stays the argument's,
// which the caller holds for the call. Reading it here, not through
// nanobind, spares nanobind's probe of the legacy name first, whose
// failure raises and clears a Python exception on every call.
std::optional<DlpackTensor> from_capsule(PyObject* capsule) {
  const nb::dlpack::dltensor* dl = nullptr;
  bool read_only = false;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto* m = static_cast<ManagedVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    if (m->major != 1) return std::nullopt;  // an ABI Kiln does not know
    dl = &m->tensor;
    read_only = (m->flags & kDlpackReadOnly) != 0;
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    dl = &static_cast<ManagedLegacy*>(PyCapsule_GetPointer(capsule, "dltensor"))->tensor;
  }
  if (!dl || dl->ndim < 0 || (dl->ndim > 0 && !dl->shape)) return std::nullopt;
  DlpackTensor t = from_fields(static_cast<char*>(dl->data) + dl->byte_offset, dl->dtype,
                               static_cast<std::size_t>(dl->ndim), dl->shape, dl->strides,
                               dl->device.device_type, dl->device.device_id);
  t.read_only = read_only;
  return t;
}

}  // namespace

std::optional<DlpackTensor> as_tensor(nb::handle obj) {
  // The export (__dlpack__) is Python code that may let the GIL go.
  return calling_python([&]() -> std::optional<DlpackTensor> {
    if (nb::object capsule = dlpack_capsule(obj); capsule.is_valid()) {
      if (auto t = from_capsule(capsule.ptr())) return t;
    }
    nb::ndarray<nb::ro> arr;  // no __dlpack__: the buffer protocol
    if (!nb::try_cast(obj, arr, false)) return std::nullopt;
    return from_fields(const_cast<void*>(arr.data()), arr.dtype(), arr.ndim(), arr.shape_ptr(),
                       arr.stride_ptr(), arr.device_type(), arr.device_id());
  });
}

// Whether `obj` exports a read-only buffer (a numpy view of a bytes object,
// an array with writeable=False). An object without the buffer protocol
// (a DLPack-only tensor) has no such flag to read: false.
bool read_only_buffer(nb::handle obj) {
  if (!PyObject_CheckBuffer(obj.ptr())) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  const bool read_only = view.readonly != 0;
  PyBuffer_Release(&view);
  return read_only;
}

// Whether `obj` is a JAX array. JAX arrays are immutable (JAX may give
// one buffer to many arrays, and reuses constants), and jaxlib 0.10.2's
// __dlpack__ answers max_version with a legacy capsule, no read-only flag,
// so Kiln asks the type. An isinstance against jax.Array costs about 1 us
// (its __instancecheck__), so each type's answer is kept (the type held,
// so its address is not reused). A type seen before the program imports
// jax is not JAX's (jax makes its array types when imported); Kiln never
// imports it.
bool is_jax_array(nb::handle obj) {
  static std::vector<std::pair<PyObject*, bool>> seen;
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  for (const auto& [t, jax] : seen)
    if (t == type) return jax;
  static PyObject* const jax_name = PyUnicode_InternFromString("jax");
  nb::object jax = nb::steal(PyImport_GetModule(jax_name));
  int is = 0;
  if (jax.is_valid()) {
    is = PyObject_IsSubclass(type, nb::getattr(jax, "Array").ptr());
    if (is < 0) throw nb::python_error();
  } else {
    PyErr_Clear();
  }
  if (seen.size() < 16) seen.emplace_back(nb::handle(type).inc_ref().ptr(), is == 1);
  return is == 1;
}

}  // namespace kiln::py
