// A real redis-server for one test: started on a free loopback port with
// persistence off, in a directory of its own, stopped (SIGKILL) when the
// object dies. Tests skip when redis-server is not installed
// (scripts/setup.sh installs it).
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "run_command.hpp"

namespace kiln::testing {

inline bool have_redis_server() {
  return run_command("command -v redis-server >/dev/null 2>&1 && echo yes").out == "yes\n";
}

// A port nothing listens on now (bound, read, released).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t size = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class RedisServer {
 public:
  // `extra`: more redis-server arguments ("--requirepass", "pw", ...).
  explicit RedisServer(std::vector<std::string> extra = {}, int port = 0)
      : extra_(std::move(extra)), port_(port ? port : free_port()) {
    char dir[] = "/tmp/kiln-redis-XXXXXX";
    dir_ = ::mkdtemp(dir);
    start();
  }
  ~RedisServer() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  bool running() const { return pid_ > 0; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // Starts the server and waits (up to 10 s) until it answers PING.
  bool start() {
    std::vector<std::string> args = {
        "redis-server", "--port",    std::to_string(port_), "--bind", "127.0.0.1",
        "--save",       "",          "--appendonly",        "no",     "--dir",
        dir_,           "--logfile", dir_ + "/log"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("redis-server", argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      const std::string pong = cli("PING").out;
      if (pong == "PONG\n" || pong.find("NOAUTH") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // SIGKILL: the server dies as a crashed one does.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // redis-cli against this server (auth from `password` when given).
  CommandRun cli(const std::string& command, const std::string& password = "") const {
    const std::string auth = password.empty() ? "" : " --no-auth-warning -a " + password;
    return run_command("redis-cli -p " + std::to_string(port_) + auth + " " + command + " 2>&1");
  }

 private:
  std::vector<std::string> extra_;
  int port_;
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace kiln::testing
