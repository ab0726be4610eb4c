// mpi_collective() in the `kiln` command (kiln_distributed_lazy): Open MPI
// is mapped only when --distributed runs, from the MPI plugin
// (libkiln_mpi.so, mpi_collective.cpp built with KILN_MPI_PLUGIN), found as
// kiln/core/plugin.hpp says.
#include "kiln/core/plugin.hpp"
#include "kiln/distributed/collective.hpp"

namespace kiln {

bool mpi_built() {
  return true;  // this file is built only when MPI is (lib/distributed/CMakeLists.txt)
}

std::string mpi_absent_fix() {
  return {};  // MPI is built; a plugin that fails to load says why itself
}

Result<std::unique_ptr<Collective>> mpi_collective(std::chrono::seconds deadline) {
  Result<void*> entry = load_plugin(Plugin::kMpi, reinterpret_cast<const void*>(&mpi_built));
  if (!entry) return entry.error();
  using Entry = Collective* (*)(long long);
  return std::unique_ptr<Collective>(reinterpret_cast<Entry>(*entry)(deadline.count()));
}

}  // namespace kiln
