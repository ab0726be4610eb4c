// Tuning and skip scopes: per-thread switches saved at entry and restored
// by the destructor, so an exception unwinding through a scope restores
// the outer state exactly as a normal exit does.
#include "kiln/framework/tuning_scope.hpp"

#include "kiln/core/options.hpp"
#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/tuning_file.hpp"
#include "thread_context.hpp"

namespace kiln {

std::filesystem::path rank_file(const std::filesystem::path& path, int rank) {
  if (rank < 0) return path;
  std::filesystem::path out = path;
  out.replace_filename(path.stem().string() + ".rank" + std::to_string(rank) +
                       path.extension().string());
  return out;
}

TuningScope::TuningScope(bool tune) {
  auto& ctx = internal::thread_context();
  outer_tuning_ = ctx.tuning;
  outer_skip_ = ctx.skip;
  outer_cache_ = ctx.cache;
  ctx.tuning = tune;
}

TuningScope::TuningScope(TacticTuner& tuner, TuningScopeOptions options)
    : TuningScope(options.tune) {
  auto& ctx = internal::thread_context();
  for (auto& name : options.skip) ctx.skip.insert(std::move(name));
  if (options.borrowed_cache) {
    ctx.cache = options.borrowed_cache;
    return;
  }
  if (options.cache_path.empty()) return;
  file_ = std::make_unique<TuningFile>(tuner, options.cache_path, options.rank);
  ctx.cache = file_->cache();
}

Status TuningScope::save() {
  return file_ ? file_->save() : ok_status();
}

const std::filesystem::path& TuningScope::cache_file() const {
  static const std::filesystem::path kNone;
  return file_ ? file_->path() : kNone;
}

TuningScope::~TuningScope() {
  file_.reset();  // saved and detached
  auto& ctx = internal::thread_context();
  ctx.tuning = outer_tuning_;
  ctx.skip = std::move(outer_skip_);
  ctx.cache = outer_cache_;
}

bool TuningScope::tuning() {
  return internal::thread_context().tuning.value_or(false) && Options::global().tuning;
}

SkipScope::SkipScope(std::string op) : SkipScope(std::vector<std::string>{std::move(op)}) {}

SkipScope::SkipScope(std::initializer_list<std::string> ops)
    : SkipScope(std::vector<std::string>(ops)) {}

SkipScope::SkipScope(std::vector<std::string> ops) {
  auto& ctx = internal::thread_context();
  outer_ = ctx.skip;
  for (auto& name : ops) ctx.skip.insert(std::move(name));
}

SkipScope::~SkipScope() {
  internal::thread_context().skip = std::move(outer_);
}

bool SkipScope::skipped(std::string_view op) {
  const auto& skip = internal::thread_context().skip;
  return skip.find(op) != skip.end();
}

std::vector<std::string> SkipScope::current() {
  const auto& skip = internal::thread_context().skip;
  return {skip.begin(), skip.end()};
}

}  // namespace kiln
