/*
 * Tempo's C API (libTempoCAPI.so): the temporal and store dialects, the
 * project's passes and named pipelines, and compiling and running temporal
 * programs, for C and C++ hosts on MLIR 22 and as a pass plug-in of stock
 * mlir-opt (--load-pass-plugin=libTempoCAPI.so).
 *
 * The library links MLIR as shared libraries (libMLIR.so, and MLIR's C API
 * as libMLIR-C.so): a host links the same ones, so host and library share
 * one MLIR (its registries, its type uniquing). Link with
 *   -I<repo>/include -I/usr/lib/llvm-22/include
 *   -L<repo>/target/release -lTempoCAPI
 *   -L<repo>/target/release/mlir-c -lMLIR-C
 * and an rpath to both directories.
 *
 * Nothing here aborts on bad input: functions return NULL or false with a
 * message (free it with tempoFreeError), or emit MLIR diagnostics at the
 * user's location.
 */
#ifndef TEMPO_C_TEMPO_H
#define TEMPO_C_TEMPO_H

#include "mlir-c/IR.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Dialects ------------------------------------------------------------
 * Handles for MLIR's dialect-handle API. The dialects are defined through
 * IRDL, so they are made in a context, not in a registry: load them with
 * mlirDialectHandleLoadDialect(handle, context) (idempotent; loading either
 * loads both, and the gpu dialect whose gpu.yield ends a definition's
 * body). mlirDialectHandleInsertDialect and ...RegisterDialect do nothing.
 */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(temporal, temporal);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(store, store);

/* ---- Passes ---------------------------------------------------------------
 * Registers every pass and named pipeline of the project in MLIR's global
 * pass registry by name (as tempo-opt --list-passes shows them), with
 * options as tempo-opt parses them, so that mlirParsePassPipeline finds
 * them; also MLIR's own passes, which the pipelines use, unless the host
 * registered them. Idempotent.
 */
void tempoRegisterPasses(void);

/* ---- DLPack ----------------------------------------------------------------
 * The DLPack tensor interface (https://dmlc.github.io/dlpack), declared
 * here unless the host included dlpack.h first.
 */
#ifndef DLPACK_VERSION
typedef enum { kDLCPU = 1 } DLDeviceType;
typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice;
typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBool = 6 } DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: row-major */
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#endif

/* ---- Compiling once, running many times ----------------------------------- */

typedef struct TempoExecutable TempoExecutable;

/* A bound's value for a run. */
typedef struct {
  const char *name;
  int64_t value;
} TempoBound;

/* Compile options, space-separated: O=0..3 (optimization level, 2 by
 * default), fast-math, threads=N, memory-budget=BYTES, bound:NAME=VALUE
 * (bounds the size-dependent optimizations may plan for; runs may use
 * others). NULL or "" for the defaults. */

/* Compiles `module` (a temporal program in any context; not changed, not
 * needed afterwards: the executable has a context of its own). NULL and a
 * message in *error when it cannot. */
TempoExecutable *tempoCompile(MlirModule module, const char *options, char **error);

/* The same from MLIR text, named `sourceName` in diagnostics. */
TempoExecutable *tempoCompileSource(const char *source, const char *sourceName, const char *options, char **error);

/* The program's inputs, outputs and bounds: counts and names (valid while
 * the executable lives; NULL out of range). */
size_t tempoExecutableNumInputs(const TempoExecutable *executable);
size_t tempoExecutableNumOutputs(const TempoExecutable *executable);
size_t tempoExecutableNumBounds(const TempoExecutable *executable);
const char *tempoExecutableInputName(const TempoExecutable *executable, size_t k);
const char *tempoExecutableOutputName(const TempoExecutable *executable, size_t k);
const char *tempoExecutableBoundName(const TempoExecutable *executable, size_t k);

/* Runs the executable at `bounds` (every bound of the program) on `inputs`
 * (one per input, in order, on the CPU, of the program's element types,
 * shaped [domain bounds..., point shape...], any strides; read during the
 * call, still owned by the caller). On success each outputs[k] is a new
 * row-major tensor owned by the caller (free it with its deleter); false
 * and a message in *error otherwise. Runs as often as wanted, with new
 * bounds and inputs, without compiling again. Threads: one executable may
 * be run from several threads at once; its runs take turns (the compiled
 * code keeps state between calls), while separate executables run in
 * parallel. A NULL or destroyed executable, and NULL arrays with nonzero
 * counts, are refused with a message. */
bool tempoRun(TempoExecutable *executable, const TempoBound *bounds, size_t numBounds,
              const DLManagedTensor *const *inputs, size_t numInputs, DLManagedTensor **outputs,
              size_t numOutputs, char **error);

/* Frees an executable; NULL and executables destroyed already are ignored.
 * Destroying one while another thread runs it is an error of the caller. */
void tempoExecutableDestroy(TempoExecutable *executable);

/* Frees a message the library returned. */
void tempoFreeError(char *error);

#ifdef __cplusplus
}
#endif

#endif /* TEMPO_C_TEMPO_H */
