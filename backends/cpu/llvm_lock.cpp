#include "llvm_lock.hpp"

namespace kiln::cpu {

namespace {
std::shared_mutex& llvm_state() {
  static std::shared_mutex mutex;
  return mutex;
}
}  // namespace

std::shared_lock<std::shared_mutex> llvm_in_use() {
  return std::shared_lock(llvm_state());
}

std::unique_lock<std::shared_mutex> llvm_rewritten() {
  return std::unique_lock(llvm_state());
}

}  // namespace kiln::cpu
