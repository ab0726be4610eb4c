// Failure isolation: one bad specialization never costs its siblings.
//
// Measured with NVRTC 13.0: a failing static_assert fails the whole program
// at the front end in ~35 ms and the log names the failing instantiation.
// So the log is asked first (Compiler::blame); each blamed specialization is
// compiled alone (cheap when it is broken, and it gets a log of its own),
// the rest together. Splitting in halves is the fallback, and always
// terminates: a program of one that fails is that specialization's error.
#include <chrono>
#include <numeric>

#include "kiln/compile/compile_engine.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

namespace {

CompileUnit subset(const CompileUnit& unit, const std::vector<std::size_t>& indices) {
  CompileUnit out = unit;
  out.specializations.clear();
  for (std::size_t i : indices) out.specializations.push_back(unit.specializations[i]);
  return out;
}

// The error of one specialization, carrying the evidence of its program.
ErrorInfo entry_error(const ErrorInfo& program_error, const Specialization& s,
                      const CompileUnit& unit, const char* isolated_by) {
  ErrorInfo e = program_error;
  e.details["kernel"] = s.kernel;
  e.details["config"] = s.config.to_string();
  e.details["entry"] = s.entry;
  e.details["arch"] = unit.arch;
  e.details["isolated_by"] = isolated_by;
  if (!e.details.count("log")) e.details["log"] = "";
  if (!e.details.count("options")) {
    std::string opts;
    for (const auto& o : unit.options) opts += (opts.empty() ? "" : " ") + o;
    e.details["options"] = opts;
  }
  return e;
}

class Isolator {
 public:
  Isolator(Compiler& compiler, const CompileUnit& unit, const CancelToken& cancel,
           const CompileContext& context, UnitResult& out)
      : compiler_(compiler), unit_(unit), cancel_(cancel), context_(context), out_(out) {}

  // Compiles unit_.specializations[indices] and fills their entries.
  void run(const std::vector<std::size_t>& indices, const char* isolated_by) {
    const CompileUnit sub = subset(unit_, indices);
    ++out_.programs;
    auto program = compiler_.compile(sub, cancel_);
    if (program.ok()) {
      auto artifacts = make_artifacts(context_, compiler_, sub, *program);
      for (std::size_t k = 0; k < indices.size(); ++k) {
        // The key is that of the whole unit's specialization: identical, as
        // siblings never enter it.
        out_.entries[indices[k]] = std::move(artifacts[k]);
      }
      return;
    }
    const ErrorInfo& error = program.error();
    const bool splittable = error.code == ErrorCode::kCompileFailed && indices.size() > 1;
    if (!splittable) {
      for (std::size_t i : indices) {
        out_.entries[i] = entry_error(error, unit_.specializations[i], sub, isolated_by);
      }
      return;
    }
    const auto log_it = error.details.find("log");
    const std::string log = log_it == error.details.end() ? std::string() : log_it->second;
    std::vector<std::size_t> blamed, rest;
    {
      std::vector<bool> is_blamed(indices.size(), false);
      for (std::size_t b : compiler_.blame(sub, log)) {
        if (b < indices.size()) is_blamed[b] = true;
      }
      for (std::size_t k = 0; k < indices.size(); ++k) {
        (is_blamed[k] ? blamed : rest).push_back(indices[k]);
      }
    }
    if (!blamed.empty() && !rest.empty()) {
      KILN_LOG(kDebug) << "compile of " << sub.describe() << " failed; the log blames "
                       << blamed.size() << " specialization(s)";
      for (std::size_t b : blamed) run({b}, "log");
      run(rest, "log");
      return;
    }
    KILN_LOG(kDebug) << "compile of " << sub.describe() << " failed; splitting it";
    const std::size_t half = indices.size() / 2;
    run({indices.begin(), indices.begin() + static_cast<std::ptrdiff_t>(half)}, "split");
    run({indices.begin() + static_cast<std::ptrdiff_t>(half), indices.end()}, "split");
  }

 private:
  Compiler& compiler_;
  const CompileUnit& unit_;
  const CancelToken& cancel_;
  const CompileContext& context_;
  UnitResult& out_;
};

}  // namespace

UnitResult compile_isolated(Compiler& compiler, const CompileUnit& unit, const CancelToken& cancel,
                            const CompileContext& context) {
  const auto start = std::chrono::steady_clock::now();
  UnitResult out;
  out.unit = unit;
  out.entries.assign(unit.specializations.size(),
                     make_error(ErrorCode::kInternal, "specialization was never compiled"));
  std::vector<std::size_t> all(unit.specializations.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (!all.empty()) Isolator(compiler, unit, cancel, context, out).run(all, "program");
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kiln
