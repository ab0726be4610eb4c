// A deliberate bug for the sanitizer of this build to report (see
// CMakeLists.txt): a data race under TSan, a heap overflow under ASan.
#include <cstdio>
#include <thread>
#include <vector>

#include "sanitized.hpp"

namespace {

int shared_counter = 0;  // written by two threads with no synchronisation

void race() {
  std::thread other([] { ++shared_counter; });
  ++shared_counter;
  other.join();
}

void overflow(std::size_t n) {
  std::vector<int>* v = new std::vector<int>(n);
  int* data = v->data();
  std::printf("%d\n", data[n]);  // one past the end of the heap block
  delete v;
}

}  // namespace

int main(int argc, char**) {
#if defined(KILN_TEST_TSAN)
  race();
#else
  overflow(static_cast<std::size_t>(argc) + 3);
#endif
  std::printf("the sanitizer did not stop the canary: %d\n", shared_counter);
  return 0;
}
