// A tuning-decisions file attached to a TacticTuner for as long as it is
// open, bound to no thread.
//
// Opened at construction (one file per rank; a malformed file is logged and
// treated as empty, never fatal) and attached to the tuner; close() (or the
// destructor) saves it (a failure is logged) and detaches it. TuningScope
// owns one for its thread; the Python binding holds one per kiln.tuning()
// block, which asyncio tasks may enter and leave on one thread in any order.
//
//   kiln::TuningFile file(tuner, "tactics.json", /*rank=*/3);  // tactics.rank3.json
//   // ... choose_one() inside a scope that names file.cache() ...
//   file.close();
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "kiln/core/error.hpp"

namespace kiln {

class TacticTuner;
class TuningCache;

class TuningFile {
 public:
  // `rank` unset: Options::rank (KILN_RANK, RANK, LOCAL_RANK). `tuner` must
  // outlive this object.
  TuningFile(TacticTuner& tuner, const std::filesystem::path& path, std::optional<int> rank);
  ~TuningFile();
  TuningFile(const TuningFile&) = delete;
  TuningFile& operator=(const TuningFile&) = delete;

  // Saves now; the error (naming the file) when the disk refuses.
  Status save();
  // Saves (a failure is logged) and detaches; later calls do nothing. The
  // cache stays readable by whoever still holds it, but the tuner no longer
  // serves from it or records into it.
  void close();

  const std::filesystem::path& path() const { return file_; }
  TuningCache* cache() const { return cache_.get(); }

 private:
  TacticTuner* tuner_;
  std::filesystem::path file_;
  std::unique_ptr<TuningCache> cache_;
  bool open_ = true;
};

}  // namespace kiln
