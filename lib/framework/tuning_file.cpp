// See tuning_file.hpp.
#include "kiln/framework/tuning_file.hpp"

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/tuning_scope.hpp"

namespace kiln {

TuningFile::TuningFile(TacticTuner& tuner, const std::filesystem::path& path,
                       std::optional<int> rank)
    : tuner_(&tuner), file_(rank_file(path, rank.value_or(Options::global().rank))) {
  if (file_.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(file_.parent_path(), ec);
  }
  // open_file reads what is there; a malformed file is logged by the cache
  // and its records skipped, never fatal.
  cache_ = std::make_unique<TuningCache>(TuningCache::open_file(file_, /*read_only=*/false));
  tuner_->attach(cache_.get());
}

TuningFile::~TuningFile() {
  close();
}

Status TuningFile::save() {
  auto saved = cache_->save();
  if (!saved.ok()) {
    ErrorInfo e = saved.error();
    e.details["file"] = file_.string();
    return e;
  }
  return ok_status();
}

void TuningFile::close() {
  if (!open_) return;
  open_ = false;
  Status st = save();
  if (!st.ok()) KILN_LOG(kWarn) << "tuning scope: " << st.error().describe();
  tuner_->detach(cache_.get());
}

}  // namespace kiln
