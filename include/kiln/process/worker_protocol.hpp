// The one protocol between Kiln and its worker program (kiln-bench-worker):
// every operation a worker serves, compiling and benchmarking alike, is a
// request of one operation and a reply, over worker_process.hpp's framing (a JSON
// frame, then one raw-bytes frame).
//
//   request:  {"op": "<name>", "fields": {...}}           raw: the op's bytes
//   reply:    {"ok": true, "fields": {...}}               raw: the op's bytes
//             {"ok": false, "error": {code, message, details}}
//
// An operation is named by the code that owns its types
// (compile/compile_worker.hpp, tuner/bench_call.hpp), not listed here: this
// layer sits below them. Its typed message is a struct with
// `static constexpr Op kOp` (its name on the wire), `Payload encode() const`
// and `static Result<T> decode(Payload)`. A new operation is one such struct
// and one handler (WorkerServer::on, worker_server.hpp).
// kWireVersion must be bumped on any change to the envelope or a message.
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/checked_math.hpp"
#include "kiln/core/error.hpp"

namespace kiln::worker {

// Checked by the hello: a parent and a worker of different versions refuse
// each other before any other message.
inline constexpr int kWireVersion = 4;

// An operation's name on the wire ("compile", "measure"): a renamed
// operation is a new wire version. Every worker answers kHelloOp.
using Op = std::string_view;
inline constexpr Op kHelloOp = "hello";

// A file descriptor that travels with a message (SCM_RIGHTS over the
// worker's socket): the sealed memory holding a benchmark call's argument
// bytes (process/shared_memory.hpp). Closed with its last holder.
class OwnedFd {
 public:
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  ~OwnedFd();
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};
using SharedFd = std::shared_ptr<const OwnedFd>;

// One message's fields, bytes (a binary, reference values) and descriptors
// (a call's argument memory); fields name a descriptor by its index here.
struct Payload {
  Payload() = default;
  Payload(nlohmann::json f, std::string r, std::vector<SharedFd> d = {})
      : fields(std::move(f)), raw(std::move(r)), fds(std::move(d)) {}
  nlohmann::json fields = nlohmann::json::object();
  std::string raw;
  std::vector<SharedFd> fds;
};

// What a worker answered to one request: the operation's value, or its
// error with the evidence the worker had (a compiler log, a device fault).
using Answer = Result<Payload>;

// What came of one request to a worker (WorkerProcess::call): `answered`
// false when no answer came (the worker died, the deadline passed), and
// then `answer` holds why.
struct [[nodiscard]] Reply {
  bool answered = false;
  Answer answer = Payload{};
};

// A message as framed: the envelope around an op's payload. `raw` views the
// payload's bytes and `fds` its descriptors (borrowed from the payload).
struct Frames {
  nlohmann::json json;
  std::string_view raw;
  std::vector<int> fds;
};
[[nodiscard]] Frames encode_request(Op op, const Payload& payload);
[[nodiscard]] Frames encode_answer(const Answer& answer);
// kCorrupt, naming what is wrong, for anything that is not a well-formed
// request or reply of this wire (garbage, an echo of the request).
// `fds`: the descriptors that came with it.
[[nodiscard]] Result<std::pair<std::string, Payload>> decode_request(
    nlohmann::json json, std::string raw, std::vector<SharedFd> fds = {});
// An answer is decoded into `*out` (the op's value or its error); the
// Status is whether it was a reply at all. (Not Result<Answer>: GCC 12
// reports a nested Result's variant as maybe-uninitialised.)
[[nodiscard]] Status decode_answer(nlohmann::json json, std::string raw, Answer* out);

// For the typed messages' decode functions: runs `decode`, turning an
// exception of a JSON accessor or a from_json into kCorrupt naming `what`,
// so that no exception leaves a function that returns Result.
template <class F>
auto decoded(const char* what, F&& decode) -> decltype(decode()) {
  try {
    return decode();
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kCorrupt, std::string(what) + ": " + e.what());
  }
}

// A whole number of type T from a message's field. nlohmann's get<T>()
// converts a float (1e113) or an out-of-range integer unchecked, undefined
// behaviour for a float; a damaged message must be an error instead (thrown,
// for decoded() to report).
template <class T>
T whole(const nlohmann::json& j) {
  std::optional<T> v;
  if (j.is_number_unsigned())
    v = checked_narrow<T>(j.get<std::uint64_t>());
  else if (j.is_number_integer())
    v = checked_narrow<T>(j.get<std::int64_t>());
  if (v) return *v;
  throw std::out_of_range("expected a whole number from " +
                          std::to_string(std::numeric_limits<T>::min()) + " to " +
                          std::to_string(std::numeric_limits<T>::max()) + ", got " + j.dump());
}

// Structured errors cross the wire whole: code, message and every detail.
nlohmann::json error_to_json(const ErrorInfo& e);
// (Result<ErrorInfo> cannot be: its value and its error would be one type.)
[[nodiscard]] Status error_from_json(const nlohmann::json& j, ErrorInfo* out);

// The hello: the parent sends its wire version, the worker answers with
// its own, its pid, the operations it serves and what it says about itself
// (a compile worker: its compiler's name, version and code options).
struct Hello {
  static constexpr Op kOp = kHelloOp;
  int wire = kWireVersion;
  [[nodiscard]] Payload encode() const;
  [[nodiscard]] static Result<Hello> decode(Payload payload);
};
struct HelloReply {
  int wire = kWireVersion;
  pid_t pid = -1;
  std::vector<std::string> ops;
  nlohmann::json about = nlohmann::json::object();
  bool serves(Op op) const;
  [[nodiscard]] Payload encode() const;
  [[nodiscard]] static Result<HelloReply> decode(Payload payload);
};

}  // namespace kiln::worker
