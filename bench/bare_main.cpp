// The floor for a C++ program's start (bench/cli_startup.sh): a main built
// like `kiln` (same compiler, flags, libstdc++) that prints one line.
#include <iostream>

int main() {
  std::cout << "bare\n";
  return 0;
}
