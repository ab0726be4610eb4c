// zip_single_member: see recorded_zip.hpp. libzip does the reading (the
// central directory, deflate, ZIP64, each member's CRC check); this file
// picks the member and words the refusals.
#include "recorded_zip.hpp"

#include <cstdint>
#include <memory>
#include <vector>

#if KILN_HAVE_LIBZIP
#include <zip.h>
#endif

namespace kiln::detail {

bool looks_like_zip(std::string_view bytes) {
  return bytes.starts_with(std::string_view("PK\x03\x04", 4)) ||
         bytes.starts_with(std::string_view("PK\x05\x06", 4));
}

#if KILN_HAVE_LIBZIP
bool zip_supported() {
  return true;
}

namespace {

constexpr std::uint64_t kLargest = std::uint64_t{1} << 31;  // as read_maybe_gzipped's limit

// A member that is a file of its own: not a folder, not a resource fork
// macOS's archiver adds beside each file.
bool is_payload(std::string_view name) {
  return !name.empty() && !name.ends_with('/') && !name.starts_with("__MACOSX/");
}

// One cleanup for every way out: the archive (with its source) and the member.
struct Discard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct Close {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string zip_error_text(zip_error_t* e) {
  const std::string s = zip_error_strerror(e);
  zip_error_fini(e);
  return s;
}

}  // namespace

Result<std::string> zip_single_member(std::string_view archive, const std::filesystem::path& path) {
  const std::string where = "recorded space " + path.string();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(archive.data(), archive.size(), 0, &error);
  if (!source)
    return make_error(ErrorCode::kInternal, where +
                                                ": libzip could not read the archive from "
                                                "memory (" +
                                                zip_error_text(&error) + ")");
  // Without ZIP_CHECKCONS: the hub's KTT zips fail that stricter check of
  // local headers against the directory, though `unzip -t` passes them and
  // their members read whole; each member's CRC is still checked below.
  const std::unique_ptr<zip_t, Discard> zip(zip_open_from_source(source, ZIP_RDONLY, &error));
  if (!zip) {
    zip_source_free(source);
    return make_error(ErrorCode::kCorrupt,
                      where + " begins as a zip archive but does not read as one (libzip: " +
                          zip_error_text(&error) +
                          "): download it again, or check it with `unzip -t`");
  }
  zip_error_fini(&error);
  // The archive owns the source from here; discarding it frees both.
  std::vector<std::pair<zip_uint64_t, std::string>> members;
  const zip_int64_t entries = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(zip.get(), static_cast<zip_uint64_t>(i), 0);
    if (name && is_payload(name)) members.emplace_back(static_cast<zip_uint64_t>(i), name);
  }
  if (members.size() != 1) {
    std::string names;
    for (std::size_t k = 0; k < members.size() && k < 4; ++k)
      names += (k ? ", " : "") + members[k].second;
    if (members.size() > 4) names += ", ...";
    return make_error(ErrorCode::kInvalidArgument,
                      members.empty()
                          ? where +
                                " is a zip archive with no file in it: pass the recorded "
                                "space itself (a .json or .json.gz file)"
                          : where + " is a zip archive of " + std::to_string(members.size()) +
                                " files (" + names +
                                "), and a replay reads one space: extract the one to replay "
                                "(`unzip " +
                                path.string() + " NAME`) and pass it");
  }
  const auto& [index, name] = members.front();
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip.get(), index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    return make_error(ErrorCode::kCorrupt, where + ": its member " + name +
                                               " has no size the archive can give (libzip: " +
                                               zip_strerror(zip.get()) + "): download it again");
  if (st.size > kLargest)
    return make_error(ErrorCode::kInvalidArgument,
                      where + ": its member " + name + " is over 2 GiB uncompressed");
  const std::unique_ptr<zip_file_t, Close> file(zip_fopen_index(zip.get(), index, 0));
  std::string out(static_cast<std::size_t>(st.size), '\0');
  const zip_int64_t got = file ? zip_fread(file.get(), out.data(), out.size()) : -1;
  // One byte more must read as the end: a member longer than its header
  // said, or cut short, is not the file that was recorded. libzip checks
  // the CRC as the end is read.
  char past = 0;
  const zip_int64_t extra = got >= 0 && file ? zip_fread(file.get(), &past, 1) : -1;
  const std::string why = file ? zip_file_strerror(file.get()) : zip_strerror(zip.get());
  if (got < 0 || static_cast<zip_uint64_t>(got) != st.size || extra != 0)
    return make_error(ErrorCode::kCorrupt,
                      where + ": its member " + name + " does not read whole (libzip: " + why +
                          ", " + std::to_string(got < 0 ? 0 : got) + " of " +
                          std::to_string(st.size) +
                          " bytes): download it again, or check it with `unzip -t`");
  return out;
}

#else

bool zip_supported() {
  return false;
}

Result<std::string> zip_single_member(std::string_view, const std::filesystem::path& path) {
  return make_error(ErrorCode::kUnavailable,
                    "recorded space " + path.string() +
                        " is a zip archive, and this Kiln was built without libzip: extract it "
                        "(`unzip " +
                        path.string() +
                        "`) and pass the file inside, or install libzip-dev (scripts/setup.sh "
                        "does) and rebuild");
}

#endif

}  // namespace kiln::detail
