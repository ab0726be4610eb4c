// The worker protocol's readers (include/kiln/process/worker_protocol.hpp, the
// compile operations' messages and the benchmark call's): a worker reads what its parent sends and
// a parent reads what a worker (or a program that is not one) answers. Promises: any bytes give a
// value or an error naming the problem, never an exception or a crash; a request that decodes
// re-encodes to one that decodes to the same. The input is the JSON frame's text, a NUL byte, then
// the raw frame's bytes.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "fuzz_check.hpp"
#include "kiln/compile/compile_worker.hpp"
#include "kiln/process/worker_protocol.hpp"
#include "tuner/bench_call.hpp"

namespace {

using kiln::fuzz::check;

// Every typed message of `op` decodes `payload` to a value or a reason.
void decode_typed(kiln::worker::Op op, const kiln::worker::Payload& payload,
                  std::string_view input) {
  auto reasoned = [&](const auto& r) {
    check(r.ok() || !r.error().message.empty(), "a refusal without a reason", input);
  };
  if (op == kiln::worker::kHelloOp) {
    reasoned(kiln::worker::Hello::decode(payload));
    reasoned(kiln::worker::HelloReply::decode(payload));
  } else if (op == kiln::CompileRequest::kOp) {
    auto request = kiln::CompileRequest::decode(payload);
    reasoned(request);
    if (request.ok()) reasoned(kiln::decode_program(payload, request->unit));
  } else if (op == kiln::BlameRequest::kOp) {
    reasoned(kiln::BlameRequest::decode(payload));
  } else if (op == kiln::internal::BenchCall::kOp) {
    // No descriptor comes with fuzzed bytes: a call that names its shared
    // memory is refused by name, one without any decodes.
    reasoned(kiln::internal::BenchCall::decode(payload));
  } else if (op == kiln::internal::MeasureRequest::kOp) {
    reasoned(kiln::internal::MeasureRequest::decode(payload));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  const std::string raw(nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1));
  try {
    auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return 0;  // the framing refuses it before any decoder
    kiln::worker::Answer answer = kiln::worker::Payload{};
    kiln::Status read = kiln::worker::decode_answer(json, raw, &answer);
    check(read.ok() || !read.error().message.empty(), "a reply refused without a reason", input);
    auto request = kiln::worker::decode_request(json, raw);
    if (!request.ok()) {
      check(!request.error().message.empty(), "a request refused without a reason", input);
      return 0;
    }
    auto& [op, payload] = *request;
    decode_typed(op, payload, input);
    const auto frames = kiln::worker::encode_request(op, payload);
    auto again = kiln::worker::decode_request(frames.json, std::string(frames.raw));
    check(again.ok(), "an encoded request is refused by the decoder", input);
    check(again->first == op && again->second.fields == payload.fields &&
              again->second.raw == payload.raw,
          "a request changed in an encode and decode", input);
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("exception escaped a decoder: ") + e.what(), input);
  }
  return 0;
}
