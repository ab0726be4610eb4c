// The worker's serve loop (worker_server.hpp).
#include "kiln/process/worker_server.hpp"

#include <unistd.h>

#include "kiln/process/worker_process.hpp"

namespace kiln::worker {

void WorkerServer::on(Op op, Handler handler) {
  handlers_[std::string(op)] = std::move(handler);
}

void WorkerServer::describe(const std::string& key, nlohmann::json value) {
  about_[key] = std::move(value);
}

int WorkerServer::serve(int fd) const {
  for (;;) {
    nlohmann::json json;
    std::string raw;
    std::vector<SharedFd> fds;
    if (wire::receive(fd, &json, &raw, &fds) != wire::Received::kOk) return 0;  // the parent closed
    auto request = decode_request(std::move(json), std::move(raw), std::move(fds));
    Handled handled = [&]() -> Handled {
      if (!request.ok()) return request.error();
      auto& [op, payload] = *request;
      if (op == kHelloOp) {
        auto hello = Hello::decode(std::move(payload));
        if (!hello.ok()) return hello.error();
        HelloReply reply;
        reply.pid = ::getpid();
        reply.about = about_;
        reply.ops.emplace_back(kHelloOp);
        for (const auto& [served, handler] : handlers_) reply.ops.push_back(served);
        // A parent of another wire is answered with this one's version, so
        // that it can say which side is out of date.
        return reply.encode();
      }
      auto it = handlers_.find(op);
      if (it == handlers_.end()) {
        return make_error(
            ErrorCode::kInvalidArgument,
            "this worker does not serve '" + op + "' (it was started without the flag for it)");
      }
      try {
        return it->second(std::move(payload));
      } catch (const std::exception& e) {
        // A handler's own bug must reach the parent as this request's error,
        // not end the worker with the parent left to guess.
        return make_error(ErrorCode::kInternal, "worker failed on '" + op + "': " + e.what());
      }
    }();
    const Frames frames = encode_answer(handled.answer);
    if (!wire::send(fd, frames.json, frames.raw).ok()) return 1;
    if (handled.exit_after >= 0) return handled.exit_after;
  }
}

}  // namespace kiln::worker
