func.func @f() {
  %s = "store.alloc"() {extent = 2 : i64} : () -> memref<2xf32>
  return
}
