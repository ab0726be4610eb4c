// Tuning and skip scopes: per-thread switches saved at entry and restored
// by the destructor, so an exception unwinding through a scope restores
// the outer state exactly as a normal exit does.
#include "kiln/framework/tuning_scope.hpp"

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "kiln/framework/choose_one.hpp"
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
  ctx.tuning = tune;
}

TuningScope::TuningScope(TacticTuner& tuner, TuningScopeOptions options)
    : TuningScope(options.tune) {
  auto& ctx = internal::thread_context();
  for (auto& name : options.skip) ctx.skip.insert(std::move(name));
  if (options.cache_path.empty()) return;
  file_ = rank_file(options.cache_path, options.rank.value_or(Options::global().rank));
  if (file_.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(file_.parent_path(), ec);
  }
  // open_file reads what is there; a malformed file is logged by the cache
  // and its records skipped, never fatal.
  cache_ = std::make_unique<TuningCache>(TuningCache::open_file(file_, /*read_only=*/false));
  tuner_ = &tuner;
  tuner_->attach(cache_.get());
}

Status TuningScope::save() {
  if (!cache_) return ok_status();
  auto saved = cache_->save();
  if (!saved.ok()) {
    ErrorInfo e = saved.error();
    e.details["file"] = file_.string();
    return e;
  }
  return ok_status();
}

TuningScope::~TuningScope() {
  if (cache_) {
    Status st = save();
    if (!st.ok()) KILN_LOG(kWarn) << "tuning scope: " << st.error().describe();
    tuner_->detach(cache_.get());
  }
  auto& ctx = internal::thread_context();
  ctx.tuning = outer_tuning_;
  ctx.skip = std::move(outer_skip_);
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
