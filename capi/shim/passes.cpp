// Registering passes and pipelines by name, for libTempoCAPI.so.
//
// MLIR's C API can create an external pass (mlirCreateExternalPass) but not
// register one in the global pass registry, which is where
// mlirParsePassPipeline, mlir-opt's --pass-pipeline and its pass plug-ins
// find passes by name. These few entry points do that for passes and named
// pipelines implemented in Rust: a registered pass is a small mlir::Pass
// that keeps its option text and calls back into Rust to check the options
// and to run; a registered pipeline calls back to fill the pass manager.
// Nothing else of the project is C++.

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/TypeID.h"

#include <memory>
#include <string>

extern "C" {
/// Receives a message (an error in options or a pipeline).
typedef void (*TempoShimMessage)(MlirStringRef message, void *data);
/// Checks the option text of pass `argument`; false (and a message) when
/// it is not valid.
typedef bool (*TempoShimCheck)(MlirStringRef argument, MlirStringRef options, TempoShimMessage message, void *data);
/// Runs pass `argument` with `options` on `op`; false on failure, its
/// diagnostics emitted.
typedef bool (*TempoShimRun)(MlirStringRef argument, MlirStringRef options, MlirOperation op);
/// Adds pipeline `argument`'s passes (with `options`) to `manager`; false
/// (and a message) when it cannot.
typedef bool (*TempoShimBuild)(MlirStringRef argument, MlirStringRef options, MlirOpPassManager manager,
                               TempoShimMessage message, void *data);
}

namespace {

struct PassInfo {
  std::string argument;
  std::string summary;
  TempoShimCheck check;
  TempoShimRun run;
  mlir::TypeID id;
};

void collect(MlirStringRef message, void *data) {
  static_cast<std::string *>(data)->append(message.data, message.length);
}

/// A pass implemented in Rust, on `builtin.module`.
class ShimPass final : public mlir::Pass {
public:
  explicit ShimPass(const PassInfo *info) : Pass(info->id, llvm::StringRef("builtin.module")), info(info) {}
  ShimPass(const ShimPass &other) : Pass(other), info(other.info), options(other.options) {}

  llvm::StringRef getName() const override { return info->argument; }
  llvm::StringRef getArgument() const override { return info->argument; }
  llvm::StringRef getDescription() const override { return info->summary; }

  /// The lowerings build ops of most upstream dialects: all are made
  /// available, as tempo-opt's context has them.
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    mlirRegisterAllDialects(wrap(&registry));
  }

  bool canScheduleOn(mlir::RegisteredOperationName) const override { return true; }

  mlir::LogicalResult initializeOptions(llvm::StringRef text,
                                        llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler) override {
    std::string message;
    if (!info->check(wrap(llvm::StringRef(info->argument)), wrap(text), collect, &message))
      return errorHandler(message);
    options = text.str();
    return mlir::success();
  }

  void runOnOperation() override {
    if (!info->run(wrap(llvm::StringRef(info->argument)), wrap(llvm::StringRef(options)), wrap(getOperation())))
      signalPassFailure();
  }

  std::unique_ptr<mlir::Pass> clonePass() const override { return std::make_unique<ShimPass>(*this); }

private:
  const PassInfo *info;
  std::string options;
};

mlir::TypeID allocateId() {
  static mlir::TypeIDAllocator allocator;
  return allocator.allocate();
}

} // namespace

extern "C" {

__attribute__((visibility("hidden"))) void tempoShimRegisterPass(MlirStringRef argument, MlirStringRef summary,
                                                                  TempoShimCheck check, TempoShimRun run) {
  // Registrations live as long as the process, as MLIR's own do.
  auto *info = new PassInfo{unwrap(argument).str(), unwrap(summary).str(), check, run, allocateId()};
  mlir::registerPass([info]() -> std::unique_ptr<mlir::Pass> { return std::make_unique<ShimPass>(info); });
}

__attribute__((visibility("hidden"))) void tempoShimRegisterPipeline(MlirStringRef argument, MlirStringRef summary,
                                                                      TempoShimBuild build) {
  std::string name = unwrap(argument).str();
  mlir::registerPassPipeline(
      name, unwrap(summary),
      [name, build](mlir::OpPassManager &manager, llvm::StringRef options,
                    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler) -> mlir::LogicalResult {
        std::string message;
        if (!build(wrap(llvm::StringRef(name)), wrap(options), wrap(&manager), collect, &message))
          return errorHandler(message);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>) {});
}

/// Registers MLIR's own passes, which the project's pipelines use, unless a
/// host (mlir-opt) already has.
__attribute__((visibility("hidden"))) void tempoShimRegisterUpstreamPasses() {
  if (!mlir::PassInfo::lookup("canonicalize"))
    mlirRegisterAllPasses();
}

/// Whether a pass or pipeline of that name is registered.
__attribute__((visibility("hidden"))) bool tempoShimIsRegistered(MlirStringRef argument) {
  return mlir::PassInfo::lookup(unwrap(argument)) || mlir::PassPipelineInfo::lookup(unwrap(argument));
}

} // extern "C"
