#include "blas_worker.hpp"

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "blas_library.hpp"
#include "kiln/device/device.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

// The worker's end of the socket (its stdin and stdout are the same one).
constexpr int kRequestFd = 0, kReplyFd = 1;

// Before the library loads: no variable forces a kernel, and OpenBLAS's
// core comes from the vector unit, because its run-time detection names
// some virtual CPUs wrongly (a generic "Intel Xeon Processor" ran its SSE3
// "Prescott" kernels, 4x slower).
void use_native_kernels() {
  for (BlasFlavor flavor : {BlasFlavor::kOpenBlas, BlasFlavor::kBlis, BlasFlavor::kMkl})
    unsetenv(blas_kernel_variable(flavor));
  const DeviceTraits host = host_cpu_traits();
  const char* core = host.vector_bits >= 512 ? "SkylakeX" : host.name == "avx2" ? "Haswell" : "";
  if (*core) setenv("OPENBLAS_CORETYPE", core, 1);
}

// 64-byte aligned floats, as Kiln's tensors.
struct AlignedFloats {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data;

  void resize(std::size_t count) {
    const std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    data.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    if (!data) throw std::bad_alloc();
  }
};

struct GemmBuffers {
  GemmShape shape;
  AlignedFloats a, b, c;

  // Inputs in [-1, 1) from a fixed sequence, C zeroed: A is m x k, B k x n.
  void prepare(const GemmShape& s) {
    if (s == shape) return;
    const auto count = [](int rows, int cols) {
      return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    };
    a.resize(count(s.m, s.k));
    b.resize(count(s.k, s.n));
    c.resize(count(s.m, s.n));
    std::uint32_t state = 12345;
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) * 0x1p-23f - 1.0f;
    };
    for (std::size_t i = 0; i < count(s.m, s.k); ++i) a.data[i] = next();
    for (std::size_t i = 0; i < count(s.k, s.n); ++i) b.data[i] = next();
    for (std::size_t i = 0; i < count(s.m, s.n); ++i) c.data[i] = 0;
    shape = s;
  }
};

bool send_reply(const nlohmann::json& reply) {
  return wire::send(kReplyFd, reply).ok();
}

int serve_blas_worker(const std::string& library, int threads, bool native) {
  if (native) use_native_kernels();
  auto blas = open_blas_library(library);
  if (!blas.ok()) {
    send_reply({{"error", blas.error().message}});
    return 3;
  }
  blas->use_threads(threads);
  const char* variable = blas_kernel_variable(blas->flavor);
  const char* value = std::getenv(variable);
  nlohmann::json hello = {{"flavor", blas_flavor_name(blas->flavor)},
                          {"library", blas->library},
                          {"version", blas->version},
                          {"kernel", blas->kernel},
                          {"config", blas->config},
                          {"int64", blas->int64},
                          {"variable", variable},
                          {"value", value ? nlohmann::json(value) : nlohmann::json()},
                          {"set_by", !value   ? ""
                                     : native ? "kiln"
                                              : "environment"}};
  if (!send_reply(hello)) return 1;
  GemmBuffers buffers;
  for (;;) {
    nlohmann::json request;
    std::string raw;
    if (wire::receive(kRequestFd, &request, &raw) != wire::Received::kOk) return 0;
    const GemmShape s{request.value("m", 0), request.value("n", 0), request.value("k", 0)};
    const std::string op = request.value("op", "");
    if (s.m < 1 || s.n < 1 || s.k < 1 || (op != "check" && op != "round")) {
      send_reply({{"error",
                   "a blas-worker request is {\"op\": \"check\"|\"round\", \"m\": M, \"n\": N, "
                   "\"k\": K}"}});
      return 2;
    }
    buffers.prepare(s);
    auto run = [&] {
      blas->gemm(buffers.a.data.get(), buffers.b.data.get(), buffers.c.data.get(), s.m, s.n, s.k);
    };
    nlohmann::json reply;
    if (op == "check") {
      run();
      const GemmCheck check = check_gemm(buffers.a.data.get(), buffers.b.data.get(),
                                         buffers.c.data.get(), s.m, s.n, s.k);
      reply = {{"max_abs_err", check.max_abs_err},
               {"max_rel_err", check.max_rel_err},
               {"correct", check.correct}};
    } else {
      reply = {{"seconds", time_round(run)}};
    }
    if (!send_reply(reply)) return 1;
  }
}

}  // namespace

Result<BlasWorker> BlasWorker::start(const std::string& library, BlasRun run, int threads) {
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "bench",
                                   "blas-worker",
                                   "--library",
                                   library,
                                   "--threads",
                                   std::to_string(threads)};
  if (run == BlasRun::kNative) argv.push_back("--native");
  auto process = WorkerProcess::spawn(argv);
  if (!process.ok()) return process.error();
  BlasWorker worker;
  worker.process_ = std::move(*process);
  worker.library_ = library;
  std::string raw;
  if (wire::receive(worker.process_.fd(), &worker.hello_, &raw) != wire::Received::kOk) {
    return make_error(
        ErrorCode::kUnavailable,
        "the worker that opens " + library +
            " ended before it said which kernel it runs: " + worker.process_.reap_closed(),
        {{"library", library}});
  }
  if (worker.hello_.contains("error")) {
    return make_error(ErrorCode::kUnavailable, worker.hello_["error"].get<std::string>(),
                      {{"library", library}});
  }
  return worker;
}

Result<nlohmann::json> BlasWorker::ask(const nlohmann::json& request) {
  nlohmann::json reply;
  std::string raw;
  if (!wire::send(process_.fd(), request).ok() ||
      wire::receive(process_.fd(), &reply, &raw) != wire::Received::kOk) {
    return make_error(ErrorCode::kUnavailable,
                      "the worker running " + library_ + " ended at size " +
                          request.value("shape", std::string("?")) + ": " + process_.reap_closed(),
                      {{"library", library_}});
  }
  if (reply.contains("error"))
    return make_error(ErrorCode::kInternal, reply["error"].get<std::string>());
  return reply;
}

namespace {

nlohmann::json request_at(const char* op, const GemmShape& shape) {
  return {{"op", op}, {"m", shape.m}, {"n", shape.n}, {"k", shape.k}, {"shape", shape.label()}};
}

}  // namespace

Result<GemmCheck> BlasWorker::check(const GemmShape& shape) {
  auto reply = ask(request_at("check", shape));
  if (!reply.ok()) return reply.error();
  GemmCheck check;
  check.max_abs_err = (*reply)["max_abs_err"].get<double>();
  check.max_rel_err = (*reply)["max_rel_err"].get<double>();
  check.correct = (*reply)["correct"].get<bool>();
  return check;
}

Result<double> BlasWorker::round(const GemmShape& shape) {
  auto reply = ask(request_at("round", shape));
  if (!reply.ok()) return reply.error();
  return (*reply)["seconds"].get<double>();
}

void add_blas_worker_command(CLI::App& bench, int& exit_code) {
  struct Args {
    std::string library;
    int threads = 1;
    bool native = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = bench.add_subcommand("blas-worker", "");  // empty: hidden from help
  cmd->group("");
  cmd->add_option("--library", args->library)->required();
  cmd->add_option("--threads", args->threads)->transform(integer_in(1, kMaxThreads));
  cmd->add_flag("--native", args->native);
  cmd->callback([args, &exit_code] {
    exit_code = serve_blas_worker(args->library, args->threads, args->native);
  });
}

}  // namespace kiln::tool
