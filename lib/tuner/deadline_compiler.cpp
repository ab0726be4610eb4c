#include "deadline_compiler.hpp"

#include <chrono>
#include <string>

namespace kiln::internal {

Result<CompiledProgram> DeadlineCompiler::compile(const CompileUnit& unit,
                                                  const CancelToken& cancel) {
  using Clock = CancelToken::Clock;
  CancelToken token = CancelToken::child_of(cancel);
  token.set_deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds_)));
  auto program = inner_->compile(unit, token);
  if (!program.ok() && program.error().code == ErrorCode::kCancelled && !cancel.cancelled()) {
    ErrorInfo e = program.error();
    std::string secs = std::to_string(seconds_);
    secs.erase(secs.find_last_not_of('0') + 1);
    if (!secs.empty() && secs.back() == '.') secs.pop_back();
    e.code = ErrorCode::kTimeout;
    e.message = "compile of " + unit.describe() + " passed its deadline of " + secs +
                " s and was abandoned (" + e.message + ")";
    return e;
  }
  return program;
}

}  // namespace kiln::internal
