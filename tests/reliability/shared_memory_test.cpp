// The shared memory that carries a benchmark call's arguments to worker
// processes: it travels with a message over a real socket, arrives sealed
// (nobody can write it), and a descriptor that is not sealed memory of the
// size named is refused. The call message itself round-trips with it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/backends/cpu.hpp"
#include "kiln/process/shared_memory.hpp"
#include "kiln/process/worker_process.hpp"
#include "tuner/bench_call.hpp"

namespace kiln {
namespace {

struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
};

SharedMemory sealed_pattern(std::size_t bytes) {
  auto m = SharedMemory::create(bytes, "kiln-test");
  EXPECT_TRUE(m.ok()) << m.error().describe();
  for (std::size_t i = 0; i < bytes; ++i) m->data()[i] = static_cast<char>(i * 7);
  EXPECT_TRUE(m->seal().ok());
  return std::move(*m);
}

TEST(SharedMemory, TravelsWithAMessageAndArrivesSealed) {
  SharedMemory sent = sealed_pattern(10000);
  SocketPair sock;
  ASSERT_TRUE(wire::send(sock.fds[0], {{"hello", 1}}, "raw bytes", {sent.fd()->get()}).ok());
  nlohmann::json json;
  std::string raw;
  std::vector<worker::SharedFd> fds;
  ASSERT_EQ(wire::receive(sock.fds[1], &json, &raw, &fds), wire::Received::kOk);
  EXPECT_EQ(json["hello"], 1);
  EXPECT_EQ(raw, "raw bytes");
  ASSERT_EQ(fds.size(), 1u);
  EXPECT_NE(fds[0]->get(), sent.fd()->get()) << "a descriptor of its own, as in another process";

  auto got = SharedMemory::map(fds[0], 10000);
  ASSERT_TRUE(got.ok()) << got.error().describe();
  ASSERT_EQ(std::memcmp(got->data(), sent.data(), 10000), 0);
  // Nobody writes it: neither a writable shared mapping nor a write().
  void* w = ::mmap(nullptr, 10000, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0]->get(), 0);
  EXPECT_EQ(w, MAP_FAILED);
  EXPECT_EQ(errno, EPERM);
  EXPECT_LT(::pwrite(fds[0]->get(), "x", 1, 0), 0);

  // The next message without descriptors brings none.
  ASSERT_TRUE(wire::send(sock.fds[0], {{"again", 2}}).ok());
  ASSERT_EQ(wire::receive(sock.fds[1], &json, &raw, &fds), wire::Received::kOk);
  EXPECT_TRUE(fds.empty());
}

TEST(SharedMemory, WhatIsNotSealedMemoryOfTheNamedSizeIsRefused) {
  // A memory file nobody sealed: its bytes could change under the reader.
  const int plain = ::memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(plain, 0);
  ASSERT_EQ(::ftruncate(plain, 4096), 0);
  auto unsealed = SharedMemory::map(std::make_shared<const worker::OwnedFd>(plain), 4096);
  ASSERT_FALSE(unsealed.ok());
  EXPECT_EQ(unsealed.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(unsealed.error().message.find("not sealed"), std::string::npos);

  SharedMemory small = sealed_pattern(100);
  auto shorter = SharedMemory::map(small.fd(), 4096);
  ASSERT_FALSE(shorter.ok());
  EXPECT_NE(shorter.error().message.find("smaller than the 4096 bytes"), std::string::npos)
      << shorter.error().message;
}

TEST(SharedMemory, ACallMessageCarriesItsArgumentsInSharedMemory) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  std::vector<float> x = {1, 2, 3, 4, 5};
  int flag = 42;
  ArgList args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {5})),
                  Arg::of_pointer("flag", &flag, sizeof flag), Arg::of_scalar("n", 5)};
  auto host = internal::HostArgs::capture(**device, args);
  ASSERT_TRUE(host.ok()) << host.error().describe();
  internal::BenchCall call;
  call.args = *host;
  worker::Payload message = call.encode();
  ASSERT_EQ(message.fds.size(), 1u);
  EXPECT_TRUE(message.raw.empty()) << "the arguments' bytes went through the socket";

  auto decoded = internal::BenchCall::decode(message);
  ASSERT_TRUE(decoded.ok()) << decoded.error().describe();
  const internal::HostArgs& got = decoded->args;
  ASSERT_EQ(got.args().size(), 3u);
  EXPECT_EQ(got.args()[1].extent, sizeof flag);
  EXPECT_EQ(got.args()[1].address(), nullptr) << "the caller's address travelled";
  ASSERT_EQ(got.bytes(0).size(), sizeof(float) * 5);
  EXPECT_EQ(std::memcmp(got.bytes(0).data(), x.data(), sizeof(float) * 5), 0);
  int seen = 0;
  std::memcpy(&seen, got.bytes(1).data(), sizeof seen);
  EXPECT_EQ(seen, 42);
  // The worker's replica: its own buffers, filled from the shared copy.
  auto replica = internal::replicate(**device, got);
  ASSERT_TRUE(replica.ok()) << replica.error().describe();
  EXPECT_NE(replica->args[1].address(), static_cast<void*>(&flag));
  EXPECT_EQ(*static_cast<int*>(replica->args[1].address()), 42);

  // The same message without its descriptor is refused by name.
  message.fds.clear();
  auto orphan = internal::BenchCall::decode(message);
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(orphan.error().message.find("did not come with the message"), std::string::npos)
      << orphan.error().message;

  // A whole-number field holding a float, or an integer past its type, is a
  // corrupt message naming what it expected (a fuzzer's find: an unchecked
  // cast of 1.4e113 to int was undefined behaviour).
  const std::vector<nlohmann::json> damages = {nlohmann::json(1.4e113), nlohmann::json(3.5),
                                               nlohmann::json(std::int64_t{1} << 40)};
  for (const nlohmann::json& bad : damages) {
    worker::Payload damaged = call.encode();
    damaged.fields["options"]["min_reps"] = bad;
    auto refused = internal::BenchCall::decode(damaged);
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(refused.error().message.find("expected a whole number"), std::string::npos)
        << refused.error().message;
  }
}

}  // namespace
}  // namespace kiln
