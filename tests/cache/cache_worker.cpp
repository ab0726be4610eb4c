// kiln_cache_worker: one process of the multi-process cache tests.
//
//   artifact-storm DIR KEYS ROUNDS   look up keys 0..KEYS-1, ROUNDS times;
//                                    check every hit byte for byte, store
//                                    every miss. Exit 3 on a wrong entry.
//   tuning-storm DIR WORKER N        put and save N records of its own plus
//                                    one record every worker shares.
//   artifact-stall DIR MARKER        store a 4 MiB entry, stopping half way
//                                    (creates MARKER, then waits to be killed)
//   tuning-stall DIR MARKER          the same for a tuning save
//   write-golden DIR                 regenerate the golden files
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cache_test_util.hpp"
#include "entry_format.hpp"
#include "kiln/cache/file_io.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "tuning_file.hpp"

namespace {

using namespace kiln;
using namespace kiln::testing;

const char* g_marker = nullptr;

// Installed as the write-progress hook: past half of the bytes, announce
// (the marker file) and wait for the parent's SIGKILL.
void stall_half_way(const std::filesystem::path&, std::size_t written, std::size_t total) {
  if (written * 2 < total) return;
  int fd = ::open(g_marker, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) ::close(fd);
  for (;;) ::pause();
}

int artifact_storm(const std::filesystem::path& dir, int keys, int rounds) {
  ArtifactCache cache(options_for(dir));
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < keys; ++k) {
      // Start at a different key in each process so reads and writes of
      // one key interleave across processes.
      int index = (k + static_cast<int>(::getpid())) % keys;
      CachedArtifact want = test_artifact(index, test_size(index));
      if (r > 0) cache.clear_memory();  // force disk reads after round one
      auto got = cache.lookup(test_key(index));
      if (got) {
        if (got->binary != want.binary || got->meta != want.meta) {
          std::fprintf(stderr, "worker %d: entry %d differs from what was stored\n", ::getpid(),
                       index);
          return 3;
        }
        continue;
      }
      Result<StoreOutcome> stored = cache.store(test_key(index), std::move(want));
      if (!stored) {
        std::fprintf(stderr, "store failed: %s\n", stored.error().describe().c_str());
        return 4;
      }
    }
  }
  ArtifactCacheStats s = cache.stats();
  return s.corrupt_discarded == 0 ? 0 : 5;
}

int tuning_storm(const std::filesystem::path& dir, int worker, int n) {
  for (int i = 0; i < n; ++i) {
    // A fresh cache each round, as separate runs of a program would have.
    TuningCache cache(options_for(dir));
    cache.put(test_record("own_w" + std::to_string(worker), i, 1.0 + i));
    cache.put(test_record("shared", 1, 10.0 + worker));
    Result<StoreOutcome> saved = cache.save();
    if (!saved) {
      std::fprintf(stderr, "save failed: %s\n", saved.error().describe().c_str());
      return 4;
    }
  }
  return 0;
}

// The artifact files of format version 2: an index entry and the program
// it names (tests/cache/entry_format_test.cpp pins both).
int write_golden(const std::filesystem::path& dir) {
  CachedArtifact a;
  a.binary = std::string(
      "\x7f"
      "ELF fake cubin bytes\x00\x01\x02",
      24);
  a.meta = {{"format", "cubin"}, {"arch", "sm_90a"}, {"lowered_name", "_Z4gemmILi64EEvv"}};
  const Hash128 program = cache::program_hash(a.binary);
  std::string index = cache::encode_index(hash128("golden-entry"), program, a.meta.dump());
  if (!cache::atomic_write(dir / "artifact_index_v2.bin", index).ok()) return 4;
  if (!cache::atomic_write(dir / "artifact_program_v2.bin", cache::encode_program(a.binary)).ok())
    return 4;
  cache::TuningFile file;
  file.header = {{"created", "2026-11-21T00:00:00Z"},
                 {"device_name", "Test GPU"},
                 {"compute_capability", "9.0"}};
  TuningRecord r = test_record("gemm", 4096, 0.125);
  file.records.emplace(r.id(), r);
  nlohmann::json j = nlohmann::json::parse(cache::serialize_tuning_file(file));
  j["updated"] = "2026-11-21T00:00:00Z";  // fixed, so the golden file is stable
  if (!cache::atomic_write(dir / "tuning_v3.json", j.dump(1) + "\n").ok()) return 4;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kiln_cache_worker MODE DIR ...\n");
    return 2;
  }
  std::string mode = argv[1];
  std::filesystem::path dir = argv[2];
  if (mode == "artifact-storm" && argc == 5)
    return artifact_storm(dir, std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "tuning-storm" && argc == 5)
    return tuning_storm(dir, std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "artifact-stall" && argc == 4) {
    g_marker = argv[3];
    ArtifactCache cache(options_for(dir));
    cache::set_write_progress_hook(stall_half_way);
    (void)cache.store(test_key(1000), test_artifact(1000, 4u << 20));
    return 6;  // not reached: the hook never returns
  }
  if (mode == "tuning-stall" && argc == 4) {
    g_marker = argv[3];
    TuningCache cache(options_for(dir));
    // Enough records that the file spans several write chunks.
    for (int i = 0; i < 2000; ++i) cache.put(test_record("stalled", i, 1.0));
    cache::set_write_progress_hook(stall_half_way);
    (void)cache.save();
    return 6;
  }
  if (mode == "write-golden") return write_golden(dir);
  std::fprintf(stderr, "kiln_cache_worker: bad arguments for mode '%s'\n", mode.c_str());
  return 2;
}
