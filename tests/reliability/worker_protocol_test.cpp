// The one worker program and its one protocol (include/kiln/process/worker_protocol.hpp):
// the envelope and the hello, a WorkerServer over a real socket, the real
// kiln-bench-worker serving compile and benchmark operations in one
// process, and run_child through the one spawner.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "kiln/compile/compile_engine.hpp"
#include "kiln/compile/compile_worker.hpp"
#include "kiln/compile/kernel.hpp"
#include "kiln/process/worker_process.hpp"
#include "kiln/process/worker_server.hpp"
#include "kiln/tuner/bench_worker.hpp"
#include "tuner/bench_call.hpp"

namespace kiln {
namespace {

using worker::Op;
using Clock = std::chrono::steady_clock;

Clock::time_point in_seconds(int s) {
  return Clock::now() + std::chrono::seconds(s);
}

std::string bench_worker() {
  auto exe = find_bench_worker();
  EXPECT_TRUE(exe.ok()) << exe.error().describe();
  return exe.ok() ? *exe : std::string("/nonexistent");
}

TEST(WorkerProtocol, AnErrorCrossesTheWireWhole) {
  const ErrorInfo sent =
      make_error(ErrorCode::kCompileFailed, "gemm x8 failed",
                 {{"log", "error: N must not be 13\n  at line 4"}, {"arch", "host"}});
  const worker::Frames frames = worker::encode_answer(worker::Answer(sent));
  worker::Answer got = worker::Payload{};
  ASSERT_TRUE(worker::decode_answer(frames.json, std::string(frames.raw), &got).ok());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kCompileFailed);
  EXPECT_EQ(got.error().message, sent.message);
  EXPECT_EQ(got.error().details, sent.details);
}

// /bin/cat echoes a request back: that is never a reply, whatever it holds.
TEST(WorkerProtocol, AnEchoedRequestIsNotAReply) {
  const worker::Frames hello = worker::encode_request(worker::kHelloOp, worker::Hello{}.encode());
  worker::Answer got = worker::Payload{};
  Status read = worker::decode_answer(hello.json, std::string(hello.raw), &got);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kCorrupt);
  // An operation no layer defines is a well-formed request: the server
  // refuses it by name (AnswersWhatItServesAndRefusesTheRestInWords).
  auto unknown =
      worker::decode_request({{"op", "format_disk"}, {"fields", nlohmann::json::object()}}, "");
  ASSERT_TRUE(unknown.ok()) << unknown.error().describe();
  EXPECT_EQ(unknown->first, "format_disk");
  auto no_fields = worker::decode_request({{"op", "format_disk"}}, "");
  ASSERT_FALSE(no_fields.ok());
  EXPECT_NE(no_fields.error().message.find("format_disk"), std::string::npos);
}

// One request and its answer over a real socket to a server thread.
worker::Answer ask(int fd, Op op, const worker::Payload& payload) {
  const worker::Frames frames = worker::encode_request(op, payload);
  EXPECT_TRUE(wire::send(fd, frames.json, frames.raw).ok());
  nlohmann::json json;
  std::string raw;
  EXPECT_EQ(wire::receive(fd, &json, &raw, in_seconds(30)), wire::Received::kOk);
  worker::Answer answer = worker::Payload{};
  Status read = worker::decode_answer(std::move(json), std::move(raw), &answer);
  EXPECT_TRUE(read.ok()) << read.error().describe();
  return answer;
}

// The hello names what a server serves; an operation it does not serve and
// a handler that throws are answered as errors, and the server goes on.
TEST(WorkerServer, AnswersWhatItServesAndRefusesTheRestInWords) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  worker::WorkerServer server;
  server.describe("role", "test");
  server.on(BlameRequest::kOp, [](worker::Payload p) -> worker::WorkerServer::Handled {
    if (p.fields.contains("throw")) throw std::runtime_error("handler bug");
    return worker::Payload{{{"indices", {2}}}, "bytes"};
  });
  int status = -1;
  std::thread serving([&] { status = server.serve(fds[1]); });

  worker::Answer hello = ask(fds[0], worker::kHelloOp, worker::Hello{}.encode());
  ASSERT_TRUE(hello.ok()) << hello.error().describe();
  auto reply = worker::HelloReply::decode(*hello);
  ASSERT_TRUE(reply.ok()) << reply.error().describe();
  EXPECT_EQ(reply->wire, worker::kWireVersion);
  EXPECT_TRUE(reply->serves(BlameRequest::kOp));
  EXPECT_FALSE(reply->serves(CompileRequest::kOp));
  EXPECT_EQ(reply->about.value("role", ""), "test");

  worker::Answer refused = ask(fds[0], CompileRequest::kOp, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("does not serve 'compile'"), std::string::npos)
      << refused.error().message;
  worker::Answer unknown = ask(fds[0], "format_disk", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("does not serve 'format_disk'"), std::string::npos)
      << unknown.error().message;

  worker::Answer thrown = ask(fds[0], BlameRequest::kOp, {{{"throw", true}}, ""});
  ASSERT_FALSE(thrown.ok());
  EXPECT_EQ(thrown.error().code, ErrorCode::kInternal);
  EXPECT_NE(thrown.error().message.find("handler bug"), std::string::npos);

  worker::Answer served = ask(fds[0], BlameRequest::kOp, {});
  ASSERT_TRUE(served.ok()) << served.error().describe();
  EXPECT_EQ(served->fields["indices"], nlohmann::json({2}));
  EXPECT_EQ(served->raw, "bytes");

  ::close(fds[0]);  // the parent goes: the server ends cleanly
  serving.join();
  ::close(fds[1]);
  EXPECT_EQ(status, 0);
}

// A CPU kernel of two configs, one program each; N == 2 does not compile.
std::vector<CompileUnit> cpu_units() {
  KernelTemplate t;
  t.name = "probe";
  t.source = R"(
#include "kiln/cpu_kernel.h"
template <int N>
void probe(const kiln::cpu::BlockContext& ctx, float* y) {
  static_assert(N != 2, "kiln-test: N must not be 2");
  y[ctx.block_idx.x] = N;
}
)";
  t.entry = "probe<{N}>";
  t.space.param("N", {1, 2});
  return group(t, t.specialize_all(), GroupOptions{1, "host", BinaryFormat::kCpuObject});
}

// One worker process serves compiling and benchmarking alike.
TEST(OneWorkerProgram, ServesCompileAndBenchmarkOperations) {
  auto started = WorkerProcess::start({bench_worker(), "--compile", "cpu"}, in_seconds(60),
                                      CompileRequest::kOp);
  ASSERT_TRUE(started.ok()) << started.error().describe();
  for (Op op : {CompileRequest::kOp, BlameRequest::kOp, internal::BenchCall::kOp,
                internal::MeasureRequest::kOp, internal::ReleaseRequest::kOp}) {
    EXPECT_TRUE(started->hello.serves(op)) << op;
  }
  EXPECT_EQ(started->hello.pid, started->process.pid());
  EXPECT_EQ(started->hello.about["compiler"].value("name", ""), "clang-orc");
}

TEST(OneWorkerProgram, ACompileErrorKeepsItsLogAcrossTheProcess) {
  WorkerProcessCompiler compiler({bench_worker(), "--compile", "cpu"});
  const std::vector<CompileUnit> units = cpu_units();
  ASSERT_EQ(units.size(), 2u);
  const CompileUnit& good = units[0];
  const CompileUnit& bad = units[1];
  auto ok = compiler.compile(good, CancelToken());
  ASSERT_TRUE(ok.ok()) << ok.error().describe();
  EXPECT_EQ(ok->format, BinaryFormat::kCpuObject);
  auto failed = compiler.compile(bad, CancelToken());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kCompileFailed) << failed.error().describe();
  ASSERT_TRUE(failed.error().details.count("log")) << failed.error().describe();
  EXPECT_NE(failed.error().details.at("log").find("kiln-test: N must not be 2"), std::string::npos)
      << failed.error().describe();
  EXPECT_EQ(compiler.starts(), 1) << "a compile error is an answer, not a dead worker";
}

// A worker started for benchmarks alone is refused as a compile worker
// before any program reaches it, in words that say why.
TEST(OneWorkerProgram, AWorkerWithoutTheCompileFlagIsRefusedAsACompileWorker) {
  WorkerProcessCompiler compiler({bench_worker()});
  Status started = compiler.start();
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(started.error().message.find("does not serve 'compile'"), std::string::npos)
      << started.error().message;
}

TEST(RunChild, CapturesStdoutAndTheExitStatus) {
  auto run = run_child({"/bin/sh", "-c", "echo kiln-child; exit 3"});
  ASSERT_TRUE(run.ok()) << run.error().describe();
  EXPECT_EQ(run->out, "kiln-child\n");
  ASSERT_TRUE(WIFEXITED(run->status));
  EXPECT_EQ(WEXITSTATUS(run->status), 3);
  auto missing = run_child({"/nonexistent/kiln-child"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/kiln-child"), std::string::npos);
}

}  // namespace
}  // namespace kiln
