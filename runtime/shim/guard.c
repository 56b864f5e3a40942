/* The one thing Rust cannot do soundly: return to the start of a run from
 * deep inside the compiled code when it fails (an allocation the system
 * refuses, a swap file that cannot be written). The runtime calls the
 * compiled entry through tempo_guarded_call, which keeps a jump buffer per
 * thread; tempo_guard_unwind (called by the runtime's failure function,
 * runtime/src/guard.rs) jumps back to it. Only compiled code (no Rust or
 * C++ frame with destructors) lies between the two: the entry is called
 * here directly, not through MLIR's invokePacked. */
#include <setjmp.h>
#include <stdlib.h>

static _Thread_local jmp_buf *current = 0;

/* Calls entry(args); 0 when it returned, 1 when the run was unwound. */
int tempo_guarded_call(void (*entry)(void **), void **args) {
  jmp_buf here;
  jmp_buf *outer = current;
  current = &here;
  if (setjmp(here) == 0) {
    entry(args);
    current = outer;
    return 0;
  }
  current = outer;
  return 1;
}

/* Whether this thread runs compiled code under tempo_guarded_call. */
int tempo_guard_active(void) { return current != 0; }

/* Jumps back to this thread's tempo_guarded_call (never returns); aborts
 * where there is none (a worker thread of a parallel loop). */
void tempo_guard_unwind(void) {
  if (current)
    longjmp(*current, 1);
  abort();
}
