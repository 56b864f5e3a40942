// lower-store-to-memref on a store of growing blocks (64 points of 16 f32 =
// one 4 KiB page per block): mmap reserves room for the bound (PROT_NONE,
// MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE), the reserved memory becomes the
// store's memref through an LLVM descriptor, and the block table holds the
// range [lo, hi) of committed blocks (one row: the store has no outer
// slices; see sliced.mlir). A write grows the range to hold the
// point's block, committing (mprotect read/write) what it adds below and
// above and adding those bytes to the live count; free takes the committed
// bytes back and unmaps the reservation.
// RUN: tempo-opt %s --lower-store-to-memref | FileCheck %s
// RUN: tempo-opt %s --lower-store-to-memref --lower-loops-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-DAG: func.func private @mmap(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
// CHECK-DAG: func.func private @mprotect(!llvm.ptr, i64, i32) -> i32
// CHECK-DAG: func.func private @munmap(!llvm.ptr, i64) -> i32
// CHECK-LABEL: func.func @prefix
// CHECK-SAME: (%[[T:.*]]: index, %[[t:.*]]: index)
// CHECK: %[[B:.*]] = arith.constant 64 : index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[T]], %[[B]] : index
// CHECK: %[[CAP:.*]] = arith.muli %{{.*}}, %[[B]] : index
// CHECK: %[[PTR:.*]] = call @mmap(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
// CHECK: llvm.insertvalue %[[PTR]], %{{.*}}[0]
// CHECK: %[[S:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x16xf32>
// CHECK: %[[TABLE:.*]] = memref.alloc(%{{.*}}) : memref<?x2xindex>
// CHECK: scf.for
// CHECK: %[[HOLDING:.*]] = arith.divui %[[t]], %{{.*}} : index
// CHECK: %[[LO0:.*]] = memref.load %[[TABLE]][%{{.*}}, %{{.*}}] : memref<?x2xindex>
// CHECK: %[[HI0:.*]] = memref.load %[[TABLE]][%{{.*}}, %{{.*}}] : memref<?x2xindex>
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq, %[[LO0]], %[[HI0]] : index
// CHECK: %[[NEWLO:.*]] = arith.minui
// CHECK: %[[NEWHI:.*]] = arith.maxui
// CHECK: %[[GROW:.*]] = arith.ori
// CHECK: scf.if %[[GROW]] {
// CHECK:   memref.extract_aligned_pointer_as_index %[[S]]
// CHECK:   func.call @mprotect
// CHECK:   func.call @mprotect
// CHECK:   arith.addi
// CHECK:   memref.store %[[NEWLO]], %[[TABLE]]
// CHECK:   memref.store %[[NEWHI]], %[[TABLE]]
// CHECK: }
// CHECK: memref.subview %[[S]][%[[t]], 0] [1, 16] [1, 1] : memref<?x16xf32> to memref<16xf32, strided<[1], offset: ?>>
// A prefix read is one strided view of the reserved memory.
// CHECK: memref.subview %[[S]][%{{.*}}, 0] [%{{.*}}, 16] [1, 1] : memref<?x16xf32> to memref<?x16xf32, strided<[16, 1], offset: ?>>
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.load %[[TABLE]]
// CHECK: memref.load %[[TABLE]]
// CHECK: arith.subi
// CHECK: call @munmap
// CHECK: memref.dealloc %[[TABLE]] : memref<?x2xindex>
func.func @prefix(%T: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?x16xf32>
  %w = "store.write"(%s, %t) : (memref<?x16xf32>, index) -> memref<16xf32, strided<[1], offset: ?>>
  "store.seal"(%s, %t) : (memref<?x16xf32>, index) -> ()
  %n = arith.addi %t, %c1 : index
  %r = "store.read_range"(%s, %c0, %n) {ranged = [true]} : (memref<?x16xf32>, index, index) -> memref<?x16xf32, strided<[16, 1], offset: ?>>
  "store.free"(%s) : (memref<?x16xf32>) -> ()
  return
}

// Swapping out copies the points to a host buffer and gives back the
// blocks wholly inside the range (madvise DONTNEED, then PROT_NONE);
// swapping in commits them again and copies the points back.
// CHECK-LABEL: func.func @swap
// CHECK: %[[HOST:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<?x16xf32, strided<[16, 1], offset: ?>>) outs(%[[HOST]] : memref<?x16xf32>)
// CHECK: arith.ceildivui
// CHECK: scf.if
// CHECK:   func.call @madvise
// CHECK:   func.call @mprotect
// CHECK:   arith.subi
// CHECK: scf.if
// CHECK:   func.call @mprotect
// CHECK:   arith.addi
// CHECK: linalg.copy ins(%[[HOST]] : memref<?x16xf32>)
// CHECK: memref.dealloc %[[HOST]]
func.func @swap(%T: index, %lo: index, %hi: index) {
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?x16xf32>
  %host = "store.swap_out"(%s, %lo, %hi) : (memref<?x16xf32>, index, index) -> memref<?x16xf32>
  "store.swap_in"(%s, %host, %lo, %hi) : (memref<?x16xf32>, memref<?x16xf32>, index, index) -> ()
  "store.free"(%s) : (memref<?x16xf32>) -> ()
  return
}

// LLVM-NOT: store.
// LLVM-NOT: unrealized_conversion_cast
// LLVM: llvm.func @prefix
// LLVM: llvm.call @mmap
