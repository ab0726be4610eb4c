// HostJit: LLVM ORC (LLJIT) linking host object files into the process.
// Each object gets its own JITDylib, so the identical entry names of two
// artifacts ("kiln_entry_0") never clash, and dropping the last JitModule of
// an artifact removes its code. No LLVM headers here: the CPU device
// includes this.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/core/error.hpp"
#include "runtime/cpu_runtime.hpp"

namespace kiln::cpu {

class JitModule;

class HostJit : public std::enable_shared_from_this<HostJit> {
 public:
  // One LLJIT for the process's lifetime of this object. Errors (a value)
  // when LLVM cannot target the host.
  static Result<std::shared_ptr<HostJit>> create();
  // The process's one HostJit, made on first use (every CPU device shares
  // it: each object gets its own JITDylib anyway).
  static Result<std::shared_ptr<HostJit>> shared();
  ~HostJit();

  // Links `object` (an ELF relocatable) into a fresh JITDylib. `label`
  // names it in errors. Thread-safe.
  Result<std::shared_ptr<JitModule>> load(const std::string& object, const std::string& label);

  struct Impl;

 private:
  explicit HostJit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class JitModule;
};

class JitModule final : public CodeModule {
 public:
  ~JitModule() override;
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

  // The address of `symbol` (linking the object on first lookup); an error
  // naming the symbol when the object lacks it.
  Result<void*> lookup(const std::string& symbol) override;

 private:
  friend class HostJit;
  JitModule(std::shared_ptr<HostJit> jit, void* dylib, std::string label);
  std::shared_ptr<HostJit> jit_;
  void* dylib_;  // llvm::orc::JITDylib*
  std::string label_;
};

}  // namespace kiln::cpu
