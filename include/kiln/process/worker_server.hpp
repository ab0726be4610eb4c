// The worker's side of the worker protocol (worker_protocol.hpp): one loop
// that reads a request, hands it to the handler registered for its Op and
// sends the answer, until the parent closes the socket. The hello is
// answered here, naming every registered operation, so a parent learns
// what a worker serves before it asks.
//
//   WorkerServer server;
//   add_compile_handlers(server, compiler);      // compile/compile_worker.hpp
//   add_bench_handlers(server, open_device);     // tuner/bench_worker.hpp
//   return server.serve(fd);
#pragma once

#include <functional>
#include <map>
#include <string>

#include "kiln/process/worker_protocol.hpp"

namespace kiln::worker {

class WorkerServer {
 public:
  // A handler's answer, and whether the worker ends after sending it (a
  // device a fault made unusable: the parent starts a fresh worker).
  struct Handled {
    Answer answer;
    int exit_after = -1;  // >= 0: the worker exits with this status after the reply
    Handled(Answer a, int exit_status = -1)  // NOLINT(implicit)
        : answer(std::move(a)), exit_after(exit_status) {}
    Handled(Payload p) : answer(std::move(p)) {}    // NOLINT(implicit)
    Handled(ErrorInfo e) : answer(std::move(e)) {}  // NOLINT(implicit)
  };
  using Handler = std::function<Handled(Payload)>;

  // Registers the handler of `op`; one per op (a second replaces the first).
  void on(Op op, Handler handler);
  // Typed: `Message::decode` runs first; a malformed request is answered
  // with its error and never reaches `handle`.
  template <class Message, class F>
  void on(F handle) {
    on(Message::kOp, [handle = std::move(handle)](Payload p) -> Handled {
      auto message = Message::decode(std::move(p));
      if (!message.ok()) return message.error();
      return handle(std::move(*message));
    });
  }
  // Added to the hello reply's `about` (a compile worker's compiler).
  void describe(const std::string& key, nlohmann::json value);

  // Serves `fd` until the parent closes it. Returns the exit status for the
  // process: 0 on a clean end, 1 when the socket failed, or a handler's
  // exit_after.
  [[nodiscard]] int serve(int fd) const;

 private:
  std::map<std::string, Handler, std::less<>> handlers_;
  nlohmann::json about_ = nlohmann::json::object();
};

}  // namespace kiln::worker
