// Config values and hooks: see py_hooks.hpp.
#include "py_hooks.hpp"

#include <nanobind/stl/string.h>

#include "py_args.hpp"
#include "py_errors.hpp"
#include "py_launch.hpp"

namespace nb = nanobind;

namespace kiln::py {

Value to_value(nb::handle v, const std::string& name) {
  if (nb::isinstance<nb::bool_>(v)) return Value{v.ptr() == Py_True};
  if (nb::isinstance<nb::int_>(v)) return Value{int64_of(v, "config parameter " + name)};
  if (nb::isinstance<nb::str>(v)) return Value{nb::cast<std::string>(v)};
  throw Error(ErrorCode::kInvalidArgument, "config parameter " + name + " has the value " +
                                               nb::cast<std::string>(nb::repr(v)) +
                                               ": a value is an int, a bool or a str");
}

nb::object from_value(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return nb::int_(*i);
  if (const auto* b = std::get_if<bool>(&v)) return nb::bool_(*b);
  return nb::str(std::get<std::string>(v).c_str());
}

Config to_config(nb::handle d) {
  Config c;
  if (!nb::isinstance<nb::dict>(d)) {
    throw Error(ErrorCode::kInvalidArgument, "a config is " + nb::cast<std::string>(nb::repr(d)) +
                                                 ": give a kiln.Config or a dict of parameters");
  }
  for (auto [k, v] : nb::borrow<nb::dict>(d)) {
    if (!nb::isinstance<nb::str>(k)) {
      throw Error(ErrorCode::kInvalidArgument, "a config names the parameter " +
                                                   nb::cast<std::string>(nb::repr(k)) +
                                                   ": parameter names are strings");
    }
    const std::string name = nb::cast<std::string>(k);
    c.set(name, to_value(v, name));
  }
  return c;
}

Error hook_error(const char* hook, const nb::python_error& e, PendingInterrupt* pending) {
  if (is_interrupt(e)) {
    if (!pending) throw e;
    pending->keep_if_interrupt(e);
    return Error(ErrorCode::kCancelled,
                 std::string(hook) + " raised " + describe_exception(e) + ": the tuning run stops");
  }
  return Error(ErrorCode::kInvalidArgument, std::string(hook) + " raised " + describe_exception(e));
}

thread_local const HookScope* HookScope::innermost_ = nullptr;

nb::object Hooks::py_config(const Config& c) const {
  nb::dict kw;
  for (const auto& [k, v] : c.values()) kw[k.c_str()] = from_value(v);
  nb::object made = nb::steal(PyObject_Call(config_cls.ptr(), nb::tuple().ptr(), kw.ptr()));
  // A failed call (a KeyboardInterrupt delivered inside Config.__init__)
  // is raised as itself, never used as a null object.
  if (!made.is_valid()) throw nb::python_error();
  return made;
}

LaunchGeometry Hooks::geometry(const Config& c, nb::handle call_named) const {
  if (constant_geometry) return constant;
  nb::dict meta;
  for (auto [k, v] : nb::borrow<nb::dict>(call_named)) meta[k] = v;
  for (const auto& [k, v] : c.values()) meta[k.c_str()] = from_value(v);
  auto eval = [&](const nb::object& f, const char* what) -> nb::object {
    if (!PyCallable_Check(f.ptr())) return f;
    try {
      return calling_python([&] { return f(meta); });
    } catch (nb::python_error& e) {
      if (is_interrupt(e)) throw;  // the caller (the launch rule's wrapper) decides
      throw hook_error(what, e, nullptr);
    }
  };
  LaunchGeometry g;
  g.grid = to_dim3(eval(grid, "grid(meta)"), "grid", /*empty_ok=*/true);
  g.block = to_dim3(eval(block, "block(meta)"), "block");
  g.shared_bytes = to_shared_bytes(eval(shared_bytes, "shared_bytes(meta)"));
  return g;
}

// A size a user's callable returned (a DynamicDim map, a constraint): an
// int, named in the error otherwise.
std::int64_t size_of(nb::handle v, const char* what) {
  std::int64_t size = 0;
  if (nb::isinstance<nb::bool_>(v) || !nb::try_cast(v, size, true)) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + " returned " +
                                                 nb::cast<std::string>(nb::repr(v)) +
                                                 ": it returns a size, an int");
  }
  return size;
}

}  // namespace kiln::py
