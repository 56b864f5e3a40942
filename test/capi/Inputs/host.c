/* A C host of libTempoCAPI.so, built with gcc against Debian's MLIR C
 * headers and include/tempo-c/Tempo.h (test/capi/c-host.mlir builds and
 * runs it). It loads the dialects into its own context (twice), parses a
 * temporal program, runs a pipeline of the project's passes and MLIR's
 * parsed by name, compiles the counter and a causal attention program once
 * each and runs them several times with DLPack tensors, and checks that bad
 * input is refused with messages. Prints "N passed, M failed". */
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "tempo-c/Tempo.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0, failed = 0;

static void check(int ok, const char *what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED: %s\n", what);
  }
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc(n + 1);
  size_t got = fread(text, 1, n, f);
  text[got] = 0;
  fclose(f);
  return text;
}

static void append(MlirStringRef text, void *data) {
  char *buffer = data;
  size_t used = strlen(buffer);
  size_t room = 4095 - used;
  size_t n = text.length < room ? text.length : room;
  memcpy(buffer + used, text.data, n);
  buffer[used + n] = 0;
}

/* A DLPack tensor over `data` that the host owns (no deleter needed). */
static DLManagedTensor tensor(void *data, int64_t *shape, int ndim, uint8_t code, uint8_t bits) {
  DLManagedTensor t;
  memset(&t, 0, sizeof t);
  t.dl_tensor.data = data;
  t.dl_tensor.device.device_type = kDLCPU;
  t.dl_tensor.ndim = ndim;
  t.dl_tensor.dtype.code = code;
  t.dl_tensor.dtype.bits = bits;
  t.dl_tensor.dtype.lanes = 1;
  t.dl_tensor.shape = shape;
  return t;
}

/* One thread of the concurrency check: runs the shared counter 20 times
 * at its own bound; the result is 1 when every run counted right. */
struct worker {
  TempoExecutable *exe;
  int64_t steps;
  int ok;
};

static void *work(void *arg) {
  struct worker *w = arg;
  w->ok = 1;
  for (int k = 0; k < 20 && w->ok; ++k) {
    TempoBound bound = {"T", w->steps + k};
    DLManagedTensor *out = NULL;
    char *error = NULL;
    if (!tempoRun(w->exe, &bound, 1, NULL, 0, &out, 1, &error)) {
      tempoFreeError(error);
      w->ok = 0;
      break;
    }
    const int64_t *x = out->dl_tensor.data;
    w->ok = out->dl_tensor.shape[0] == w->steps + k;
    for (int64_t t = 0; w->ok && t < w->steps + k; ++t)
      w->ok = x[t] == t;
    out->deleter(out);
  }
  return NULL;
}

static void counter(const char *examples) {
  char path[4096];
  snprintf(path, sizeof path, "%s/counter.mlir", examples);
  char *source = read_file(path);
  check(source != NULL, "reads examples/counter.mlir");
  char *error = NULL;
  TempoExecutable *exe = tempoCompileSource(source, path, "O=2", &error);
  check(exe != NULL, "compiles the counter");
  if (!exe) {
    printf("  %s\n", error);
    tempoFreeError(error);
    return;
  }
  check(tempoExecutableNumBounds(exe) == 1 && strcmp(tempoExecutableBoundName(exe, 0), "T") == 0, "the counter's bound is T");
  check(tempoExecutableNumInputs(exe) == 0 && tempoExecutableNumOutputs(exe) == 1, "the counter has no input and one output");
  /* Compiled once, run at several bounds. */
  for (int64_t T = 3; T <= 9; T += 3) {
    TempoBound bound = {"T", T};
    DLManagedTensor *out = NULL;
    bool ran = tempoRun(exe, &bound, 1, NULL, 0, &out, 1, &error);
    check(ran, "runs the counter");
    if (!ran) {
      printf("  %s\n", error);
      tempoFreeError(error);
      continue;
    }
    const DLTensor *x = &out->dl_tensor;
    int ok = x->ndim == 1 && x->shape[0] == T && x->dtype.code == kDLInt && x->dtype.bits == 64;
    for (int64_t t = 0; ok && t < T; ++t)
      ok = ((const int64_t *)x->data)[t] == t;
    check(ok, "the counter counts 0, 1, ..., T - 1");
    out->deleter(out);
  }
  /* A missing bound is refused with a message. */
  DLManagedTensor *out = NULL;
  check(!tempoRun(exe, NULL, 0, NULL, 0, &out, 1, &error) && error && strstr(error, "missing bound T"),
        "a run without its bound is refused");
  tempoFreeError(error);
  /* NULL arrays with counts are refused, not read. */
  error = NULL;
  check(!tempoRun(exe, NULL, 1, NULL, 0, &out, 1, &error) && error && strstr(error, "bounds is NULL"),
        "NULL bounds with a count are refused");
  tempoFreeError(error);
  TempoBound three = {"T", 3};
  error = NULL;
  check(!tempoRun(exe, &three, 1, NULL, 0, NULL, 1, &error) && error && strstr(error, "outputs is NULL"),
        "NULL outputs with a count are refused");
  tempoFreeError(error);
  /* One executable run from four threads at once: every run right. */
  pthread_t threads[4];
  struct worker workers[4];
  for (int k = 0; k < 4; ++k) {
    workers[k] = (struct worker){exe, 5 + 7 * k, 0};
    pthread_create(&threads[k], NULL, work, &workers[k]);
  }
  int all = 1;
  for (int k = 0; k < 4; ++k) {
    pthread_join(threads[k], NULL);
    all = all && workers[k].ok;
  }
  check(all, "one executable run from four threads at once counts right every time");
  tempoExecutableDestroy(exe);
  /* A destroyed executable is refused, and destroying it again is a no-op. */
  error = NULL;
  check(!tempoRun(exe, &three, 1, NULL, 0, &out, 1, &error) && error && strstr(error, "not a live executable"),
        "a destroyed executable is refused");
  tempoFreeError(error);
  check(tempoExecutableNumOutputs(exe) == 0 && tempoExecutableBoundName(exe, 0) == NULL,
        "a destroyed executable has no inputs, outputs or bounds");
  tempoExecutableDestroy(exe);
  free(source);
}

/* Causal attention with identity weights: o[t] = sum_j softmax_j(x[j].x[t]) x[j], j <= t. */
static void attention(const char *examples) {
  char path[4096];
  snprintf(path, sizeof path, "%s/causal_attention.mlir", examples);
  char *source = read_file(path);
  char *error = NULL;
  TempoExecutable *exe = tempoCompileSource(source, path, "O=3 fast-math", &error);
  check(exe != NULL, "compiles causal attention");
  if (!exe) {
    printf("  %s\n", error);
    tempoFreeError(error);
    return;
  }
  check(tempoExecutableNumInputs(exe) == 4, "attention has four inputs");
  enum { T = 6, D = 4 };
  float x[T][D], identity[D][D];
  for (int t = 0; t < T; ++t)
    for (int d = 0; d < D; ++d)
      x[t][d] = (float)sin(1.0 + t * 0.7 + d * 1.3);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j)
      identity[i][j] = i == j ? 1.0f : 0.0f;
  int64_t x_shape[2] = {T, D}, w_shape[2] = {D, D};
  DLManagedTensor xt = tensor(x, x_shape, 2, kDLFloat, 32);
  DLManagedTensor wt = tensor(identity, w_shape, 2, kDLFloat, 32);
  const DLManagedTensor *inputs[4] = {&xt, &wt, &wt, &wt};
  for (int run = 0; run < 2; ++run) {
    TempoBound bound = {"T", T};
    DLManagedTensor *out = NULL;
    bool ran = tempoRun(exe, &bound, 1, inputs, 4, &out, 1, &error);
    check(ran, "runs causal attention");
    if (!ran) {
      printf("  %s\n", error);
      tempoFreeError(error);
      continue;
    }
    const float *o = out->dl_tensor.data;
    double worst = 0;
    for (int t = 0; t < T; ++t) {
      double scores[T], top = -INFINITY, sum = 0;
      for (int j = 0; j <= t; ++j) {
        scores[j] = 0;
        for (int d = 0; d < D; ++d)
          scores[j] += x[j][d] * x[t][d];
        top = scores[j] > top ? scores[j] : top;
      }
      for (int j = 0; j <= t; ++j)
        sum += scores[j] = exp(scores[j] - top);
      for (int d = 0; d < D; ++d) {
        double want = 0;
        for (int j = 0; j <= t; ++j)
          want += scores[j] / sum * x[j][d];
        double diff = fabs(want - o[t * D + d]);
        worst = diff > worst ? diff : worst;
      }
    }
    check(out->dl_tensor.ndim == 2 && out->dl_tensor.shape[0] == T && out->dl_tensor.shape[1] == D,
          "attention's output is [T, 4]");
    check(worst < 1e-4, "attention matches the reference computed here");
    out->deleter(out);
  }
  /* The same x stored column-major (strides in elements): read through its
   * strides, the same result as the row-major run read in place. */
  float columns[D][T];
  for (int t = 0; t < T; ++t)
    for (int d = 0; d < D; ++d)
      columns[d][t] = x[t][d];
  int64_t column_strides[2] = {1, T};
  DLManagedTensor xc = tensor(columns, x_shape, 2, kDLFloat, 32);
  xc.dl_tensor.strides = column_strides;
  const DLManagedTensor *strided_inputs[4] = {&xc, &wt, &wt, &wt};
  TempoBound steps = {"T", T};
  DLManagedTensor *row_major = NULL, *strided = NULL;
  bool both = tempoRun(exe, &steps, 1, inputs, 4, &row_major, 1, &error) &&
              tempoRun(exe, &steps, 1, strided_inputs, 4, &strided, 1, &error);
  check(both && memcmp(row_major->dl_tensor.data, strided->dl_tensor.data, sizeof(float) * T * D) == 0,
        "a strided input gives the row-major input's result");
  if (both) {
    row_major->deleter(row_major);
    strided->deleter(strided);
  }
  /* An input of the wrong element type is refused with a message. */
  double wrong[T][D] = {{0}};
  DLManagedTensor bad = tensor(wrong, x_shape, 2, kDLFloat, 64);
  const DLManagedTensor *bad_inputs[4] = {&bad, &wt, &wt, &wt};
  TempoBound bound = {"T", T};
  DLManagedTensor *out = NULL;
  check(!tempoRun(exe, &bound, 1, bad_inputs, 4, &out, 1, &error) && error && strstr(error, "input 'x'"),
        "an input of the wrong type is refused");
  tempoFreeError(error);
  /* A tensor of rank 2 whose shape pointer is NULL is refused (not read). */
  DLManagedTensor shapeless = tensor(x, x_shape, 2, kDLFloat, 32);
  shapeless.dl_tensor.shape = NULL;
  const DLManagedTensor *shapeless_inputs[4] = {&shapeless, &wt, &wt, &wt};
  error = NULL;
  check(!tempoRun(exe, &bound, 1, shapeless_inputs, 4, &out, 1, &error) && error && strstr(error, "shape is NULL"),
        "an input whose shape is NULL is refused");
  tempoFreeError(error);
  tempoExecutableDestroy(exe);
  free(source);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: host EXAMPLES_DIR\n");
    return 2;
  }
  const char *examples = argv[1];
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  /* The dialects, loaded twice: the second load is a no-op. */
  MlirDialect temporal = mlirDialectHandleLoadDialect(mlirGetDialectHandle__temporal__(), context);
  MlirDialect again = mlirDialectHandleLoadDialect(mlirGetDialectHandle__temporal__(), context);
  MlirDialect store = mlirDialectHandleLoadDialect(mlirGetDialectHandle__store__(), context);
  check(!mlirDialectIsNull(temporal) && mlirDialectEqual(temporal, again), "loads the temporal dialect, twice");
  check(!mlirDialectIsNull(store), "loads the store dialect");
  MlirStringRef name = mlirDialectHandleGetNamespace(mlirGetDialectHandle__temporal__());
  check(name.length == 8 && strncmp(name.data, "temporal", 8) == 0, "the handle's namespace is temporal");

  /* Parses a temporal program in the host's context. */
  char path[4096];
  snprintf(path, sizeof path, "%s/rnn.mlir", examples);
  char *source = read_file(path);
  MlirModule module = mlirModuleCreateParse(context, mlirStringRefCreateFromCString(source));
  check(!mlirModuleIsNull(module), "parses examples/rnn.mlir");

  /* The project's passes and MLIR's, by name. */
  tempoRegisterPasses();
  tempoRegisterPasses();
  MlirPassManager pm = mlirPassManagerCreate(context);
  char message[4096] = "";
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(temporal-verify, temporal-optimize, canonicalize)"), append,
      message);
  check(mlirLogicalResultIsSuccess(parsed), "parses a pipeline of project and MLIR passes by name");
  check(mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))), "runs it");
  mlirPassManagerDestroy(pm);

  /* The module compiled from the host's context. */
  char *error = NULL;
  TempoExecutable *exe = tempoCompile(module, "", &error);
  check(exe != NULL && tempoExecutableNumInputs(exe) == 3, "compiles a module of the host's context");
  if (!exe) {
    printf("  %s\n", error);
    tempoFreeError(error);
  }
  tempoExecutableDestroy(exe);

  /* A bad pass name and a bad program are refused with messages. */
  MlirPassManager bad = mlirPassManagerCreate(context);
  message[0] = 0;
  parsed = mlirParsePassPipeline(mlirPassManagerGetAsOpPassManager(bad),
                                 mlirStringRefCreateFromCString("builtin.module(temporal-nonsense)"), append, message);
  check(mlirLogicalResultIsFailure(parsed) && strstr(message, "temporal-nonsense"), "a bad pass name is refused");
  mlirPassManagerDestroy(bad);
  TempoExecutable *none = tempoCompileSource("module { \"temporal.dim\"() : () -> () }", "bad.mlir", "", &error);
  check(none == NULL && error && strstr(error, "bad.mlir:1:"), "a bad program is refused at its location");
  tempoFreeError(error);
  none = tempoCompileSource(NULL, "null.mlir", "", &error);
  check(none == NULL && error && strstr(error, "null source"), "a NULL source is refused");
  tempoFreeError(error);
  none = tempoCompileSource("module {}", "empty.mlir", "O=7", &error);
  check(none == NULL && error && strstr(error, "O=7"), "a bad option is refused");
  tempoFreeError(error);

  counter(examples);
  attention(examples);

  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  free(source);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
