// lower-store-to-memref refuses malformed stores with located diagnostics.
// RUN: not tempo-opt --split-input-file %s --lower-store-to-memref 2>&1 | FileCheck %s
// The gpu option takes true or false.
// RUN: not tempo-opt %S/full.mlir --lower-store-to-memref=gpu=maybe 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: option gpu of pass 'lower-store-to-memref' takes true or false, got 'maybe'

func.func @kind() {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: unknown store kind 'heap' (point, ring, window, blocks, full)
  %s = "store.alloc"() {kind = "heap", extent = 1 : i64} : () -> memref<2xf32>
  return
}

// -----

func.func @slots() {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: a 'ring' store of extent 3 has 3 slots as dimension 0
  %s = "store.alloc"() {kind = "ring", extent = 3 : i64} : () -> memref<2xf32>
  return
}

// -----

func.func @not_a_store(%m: memref<4xf32>, %t: index) {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'store.read' expects a store made by a store.alloc earlier in the function
  %r = "store.read"(%m, %t) : (memref<4xf32>, index) -> memref<f32, strided<[], offset: ?>>
  return
}

// -----

func.func @swap_ring(%t: index) {
  %s = "store.alloc"() {kind = "ring", extent = 2 : i64} : () -> memref<2xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: only one-dimensional 'full' and 'blocks' stores are swapped; a 'ring' store holds a few points
  %h = "store.swap_out"(%s, %t, %t) : (memref<2xf32>, index, index) -> memref<?xf32>
  return
}

// -----

func.func @full_sizes(%T: index) {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: a 'blocks' store takes one size operand per dimension, the along one's bound included
  %s = "store.alloc"() {kind = "blocks", extent = 64 : i64} : () -> memref<?xf32>
  return
}

// -----

func.func @along_out_of_range() {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'along' = 2 is not a store dimension a 'window' store runs along
  %s = "store.alloc"() {kind = "window", extent = 2 : i64, along = 2 : i64} : () -> memref<4x3xf32>
  return
}

// -----

func.func @slots_not_along(%L: index) {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: a 'ring' store of extent 2 has 2 slots as dimension 1
  %s = "store.alloc"(%L) {kind = "ring", extent = 2 : i64, along = 1 : i64} : (index) -> memref<2x?x3xf32>
  return
}

// -----

func.func @spill_ring(%t: index) {
  %s = "store.alloc"() {kind = "ring", extent = 2 : i64} : () -> memref<2xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'store.spill' works on one-dimensional 'blocks' stores; this is a 'ring' store with 1 point dimensions
  "store.spill"(%s, %t, %t) : (memref<2xf32>, index, index) -> ()
  return
}

// -----

func.func @spill_without_space(%T: index, %t: index) {
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'store.reload' needs a store allocated with swap_space = "file"
  "store.reload"(%s, %t, %t) : (memref<?xf32>, index, index) -> ()
  return
}

// -----

func.func @space_of_full(%T: index) {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: only one-dimensional 'blocks' stores have a swap space
  %s = "store.alloc"(%T) {kind = "full", extent = 0 : i64, swap_space = "file"} : (index) -> memref<?xf32>
  return
}

// -----

func.func @space_kind(%T: index) {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'swap_space' is "file" (a temporary file), the one kind of swap space
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64, swap_space = "disk"} : (index) -> memref<?xf32>
  return
}

// -----

func.func @discard_range(%T: index, %t: index) {
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'store.discard' takes the store and the range [first, last) of points
  "store.discard"(%s, %t) : (memref<?xf32>, index) -> ()
  return
}
