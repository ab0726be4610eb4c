#include "thread_worker.hpp"

namespace kiln::internal {

Result<std::unique_ptr<ThreadWorker>> ThreadWorker::on_own_device(
    std::unique_ptr<Device> device, std::shared_ptr<const ThreadCall> call) {
  std::unique_ptr<ThreadWorker> w(new ThreadWorker(std::move(call)));
  w->owned_ = std::move(device);
  w->device_ = w->owned_.get();
  auto replica = replicate(*w->device_, *w->call_->host);
  if (!replica.ok()) return replica.error();
  w->replica_ = std::move(*replica);
  w->state_ = *w->call_->state;
  w->state_->rebind(&w->replica_->args);
  return w;
}

std::unique_ptr<ThreadWorker> ThreadWorker::on_caller_device(
    Device& device, std::shared_ptr<const ThreadCall> call) {
  std::unique_ptr<ThreadWorker> w(new ThreadWorker(std::move(call)));
  w->device_ = &device;
  return w;
}

Measurement ThreadWorker::measure(const Artifact& artifact, const LaunchGeometry& geometry,
                                  const StopBars& stop, Outputs* captured, nlohmann::json*) {
  const ArgList* args = replica_ ? &replica_->args : &call_->args;
  const CallState* state = state_ ? &*state_ : &*call_->state;
  MeasureInputs in{args, state, &call_->reference, &call_->options, captured, stop};
  return internal::measure(*device_, artifact, geometry, in);
}

std::string ThreadWorker::where() const {
  return owned_ ? device_->properties().ref.to_string() + ", replica"
                : device_->properties().ref.to_string();
}

}  // namespace kiln::internal
