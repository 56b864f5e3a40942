// A loop-level function with a syntax error.
func.func @f() {
  %a = memref.alloc( : memref<4xf32>
  return
}
