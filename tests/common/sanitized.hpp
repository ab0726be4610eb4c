// Whether this test binary was built under a sanitizer. GCC says so with
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; Clang (the asan preset's
// compiler) defines neither and answers __has_feature instead, so a test
// that checks only GCC's macros takes the unsanitized branch under Clang.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KILN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KILN_TEST_SANITIZED 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define KILN_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_TEST_TSAN 1
#endif
#endif

// Skips a test under TSan whose time goes to work TSan cannot check: one
// thread's arithmetic, or code it does not see (NVRTC, LLVM, JIT-compiled
// kernels). The ASan and release suites still run it. `why` names the work.
// Its file includes skip.hpp (not here: the sanitizer canary has no gtest);
// the no-op names the class too, so a missing include fails every build.
#ifdef KILN_TEST_TSAN
#define KILN_SKIP_UNDER_TSAN(why) \
  KILN_SKIP(Skip::kSanitizer) << "nothing for TSan to check: " << (why)
#else
#define KILN_SKIP_UNDER_TSAN(why) static_cast<void>(::kiln::testing::Skip::kSanitizer)
#endif
