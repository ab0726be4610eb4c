// See py_errors.hpp.
#include "py_errors.hpp"

namespace nb = nanobind;

namespace kiln::py {

bool is_interrupt(const nb::python_error& e) {
  return !e.matches(PyExc_Exception);
}

std::string describe_exception(const nb::python_error& e) {
  std::string out = nb::cast<std::string>(nb::handle(e.type()).attr("__name__"));
  std::string message;
  try {
    message = nb::str(e.value()).c_str();
  } catch (nb::python_error&) {  // an exception whose __str__ raises is still named
    message = "(its str() raised)";
  }
  if (!message.empty()) out += ": " + message;
  nb::object tb = e.traceback();
  if (!tb.is_valid() || tb.is_none()) return out;
  while (!tb.attr("tb_next").is_none()) tb = tb.attr("tb_next");
  // NOTES: nb::str of an attribute borrows it as a str without converting
  // it; str() of the handle is what is wanted.
  nb::object file = tb.attr("tb_frame").attr("f_code").attr("co_filename");
  nb::object line = tb.attr("tb_lineno");
  return out + " (at " + nb::str(nb::handle(file)).c_str() + ":" +
         nb::str(nb::handle(line)).c_str() + ")";
}

bool PendingInterrupt::keep_if_interrupt(const nb::python_error& e) {
  if (!is_interrupt(e)) return false;
  if (!error_) error_.emplace(e);
  return true;
}

void PendingInterrupt::keep_current() {
  nb::python_error e;  // fetches (and clears) this thread's error indicator
  if (!error_) error_.emplace(std::move(e));
}

void PendingInterrupt::raise_if_pending() const {
  if (error_) throw nb::python_error(*error_);
}

}  // namespace kiln::py
