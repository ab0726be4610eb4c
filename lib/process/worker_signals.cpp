// install_worker_signal_handlers: a program that starts workers ends them
// when a signal ends it (include/kiln/process/worker_process.hpp).
#include <signal.h>

#include <cerrno>

#include "kiln/process/worker_process.hpp"

namespace kiln {

namespace {

constexpr int kEnding[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

void set_action(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(sig, &sa, nullptr);
}

void unblock(int sig) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

// Kills every worker group, then dies of the same signal with the default
// action, so that whoever waits for this process sees the real cause.
void on_ending_signal(int sig) {
  signal_worker_groups(SIGKILL);
  set_action(sig, SIG_DFL);
  ::raise(sig);  // pending while the handler runs; delivered once unblocked
  unblock(sig);
}

// Ctrl-Z: workers run in process groups of their own, so the terminal's
// SIGTSTP does not reach them; stop them with this process, and let them
// go on when it does.
void on_stop_signal(int sig) {
  const int saved = errno;
  signal_worker_groups(SIGSTOP);
  set_action(sig, SIG_DFL);
  ::raise(sig);
  unblock(sig);  // stops here until SIGCONT
  set_action(sig, on_stop_signal);
  signal_worker_groups(SIGCONT);
  errno = saved;
}

bool ignored(int sig) {
  struct sigaction old {};
  return ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN;
}

}  // namespace

void install_worker_signal_handlers() {
  // A signal ignored when the program started (`nohup`, a background job's
  // SIGINT) stays ignored.
  for (int sig : kEnding) {
    if (!ignored(sig)) set_action(sig, on_ending_signal);
  }
  if (!ignored(SIGTSTP)) set_action(SIGTSTP, on_stop_signal);
}

}  // namespace kiln
