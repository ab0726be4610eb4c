// The lab's commands as real processes: kiln() runs `kiln-lab`
// (KILN_LAB_PATH) over a fresh cache directory per test, product() the
// product's `kiln` (KILN_CLI_PATH) over the same one.
#pragma once

#include <string>
#include <utility>

#include "cli_runner.hpp"

namespace kiln::testing {

class LabCliTest : public CliTest {
 protected:
  LabCliTest() { cli_ = KILN_LAB_PATH; }

  // `kiln ARGS`: what a replay reads comes from a real tuning.
  CliRun product(const std::string& args) {
    std::string lab = std::exchange(cli_, KILN_CLI_PATH);
    CliRun run = kiln(args);
    cli_ = std::move(lab);
    return run;
  }
};

}  // namespace kiln::testing
