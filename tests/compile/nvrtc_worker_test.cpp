// Worker processes: the pool's compilers as real child processes running
// `kiln compile-worker`, with failure isolation, cancellation by SIGKILL and
// a dead child reported as an error value.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "cuda/nvrtc_api.hpp"
#include "kiln/backends/nvrtc.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/compile/compile_worker.hpp"
#include "skip.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

class Worker : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
    context_ = {current_toolchain("cuda"), CacheEnvRegistry::global().snapshot()};
  }
  static std::shared_ptr<WorkerProcessCompiler> spawn() {
    return std::make_shared<WorkerProcessCompiler>(
        std::vector<std::string>{KILN_CLI_PATH, "compile-worker", "--no-pch"});
  }
  CompileContext context_;
};

TEST_F(Worker, ReportsTheChildsCompilerAndIsolatesFailures) {
  auto worker = spawn();
  EXPECT_EQ(worker->name(), "nvrtc");
  EXPECT_EQ(worker->version(), (*cuda::nvrtc())->version_string());
  const pid_t pid = worker->child_pid();
  EXPECT_GT(pid, 0);
  EXPECT_NE(pid, ::getpid());
  auto t = test::scale_kernel();
  auto units = group(t, t.specialize_all(), GroupOptions{8, "sm_80", BinaryFormat::kCubin});
  UnitResult r = compile_isolated(*worker, units.at(0), CancelToken(), context_);
  EXPECT_EQ(r.ok_count(), 7u);
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    if (r.entries[i].ok()) {
      EXPECT_EQ(test::elf_info(*r.entries[i]->binary).machine, test::kEmCuda);
      EXPECT_NE(r.entries[i]->binary->find(r.entries[i]->lowered_name), std::string::npos);
    } else {
      EXPECT_NE(r.entries[i].error().describe().find("kiln-test: N must not be 13"),
                std::string::npos);
      EXPECT_EQ(r.entries[i].error().details.at("isolated_by"), "log");  // blame crossed the wire
    }
  }
  EXPECT_EQ(worker->child_pid(), pid) << "a healthy child serves every program";
  EXPECT_EQ(worker->starts(), 1);
}

TEST_F(Worker, SameKeysAsInProcess) {
  auto worker = spawn();
  auto t = test::scale_kernel();
  auto u = test::single_unit(t, 2);
  auto in_child = compile_isolated(*worker, u, CancelToken(), context_);
  ASSERT_EQ(in_child.ok_count(), 1u);
  EXPECT_EQ(in_child.entries[0]->compiler, "nvrtc " + (*cuda::nvrtc())->version_string());
  cuda::NvrtcSettings settings = cuda::NvrtcSettings::from_options(Options::global());
  settings.pch = false;
  auto local = cuda::make_compiler(settings);
  auto in_process = compile_isolated(*local, u, CancelToken(), context_);
  ASSERT_EQ(in_process.ok_count(), 1u);
  EXPECT_EQ(in_child.entries[0]->key, in_process.entries[0]->key);
  EXPECT_EQ(in_child.entries[0]->lowered_name, in_process.entries[0]->lowered_name);
  EXPECT_EQ(*in_child.entries[0]->binary, *in_process.entries[0]->binary);
}

TEST_F(Worker, CancelKillsTheChildAndTheNextCompileStartsAFreshOne) {
  auto worker = spawn();
  (void)worker->name();  // starts the child
  const pid_t first = worker->child_pid();
  ASSERT_GT(first, 0);
  auto t = test::scale_kernel();
  t.source = "#include <cuda/std/tuple>\n" + t.source;  // ~1.5 s front end
  auto u = test::single_unit(t, 1);
  CancelToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel.cancel();
  });
  auto r = worker->compile(u, cancel);
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(::kill(first, 0), -1) << "the cancelled child is gone";
  auto light = test::single_unit(test::scale_kernel(), 1);
  auto again = worker->compile(light, CancelToken());
  ASSERT_TRUE(again.ok()) << again.error().describe();
  EXPECT_EQ(worker->starts(), 2);
}

TEST_F(Worker, ADeadChildIsAnErrorValueThatIsolationCanSplit) {
  auto worker = spawn();
  auto t = test::scale_kernel();
  auto u = test::single_unit(t, 3);
  (void)worker->name();  // starts the child
  ASSERT_GT(worker->child_pid(), 0);
  ::kill(worker->child_pid(), SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto r = worker->compile(u, CancelToken());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCompileFailed);
  EXPECT_NE(r.error().message.find("compile worker"), std::string::npos) << r.error().message;
  auto next = worker->compile(u, CancelToken());
  EXPECT_TRUE(next.ok()) << next.error().describe();
}

TEST_F(Worker, PoolOfWorkerProcesses) {
  PoolOptions options{2, context_};
  CompilePool pool([](int) { return spawn(); }, options);
  auto t = test::scale_kernel();
  std::vector<Specialization> specs;
  for (std::int64_t n : {1, 2, 3, 4}) specs.push_back(t.specialize(Config{{"N", n}}));
  pool.submit_all(group(t, specs, GroupOptions{2, "sm_80", BinaryFormat::kCubin}));
  std::size_t ok = 0;
  while (auto done = pool.next()) ok += done->result.ok_count();
  EXPECT_EQ(ok, 4u);
}

TEST_F(Worker, NotAWorkerIsUnavailableNotACrash) {
  WorkerProcessCompiler bogus({"/bin/true"});
  auto t = test::scale_kernel();
  auto u = test::single_unit(t, 1);
  auto r = bogus.compile(u, CancelToken());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(bogus.name(), "absent");
}

}  // namespace
}  // namespace kiln
