// Executes sliced stores with mlir-runner: stores of a tensor of two
// dimensions (l < 3, t < 100, points of 8 x i64 = 64 bytes) that run along
// t, with l kept (every layer has its own slots), written in loops t then
// l with the value 1000 l + t.
// RUN: tempo-opt %s --lower-store-to-memref --lower-loops-to-llvm | %mlir_runner -e main -entry-point-result=void | FileCheck %s

// Blocks along t (store dimension 1) per outer slice l: each layer commits
// its own blocks of 64 points (one page): 100 points are 2 blocks a layer,
// 3 * 2 * 4096 bytes. Every point reads back through prefix views:
// sum over l, t of 1000 l + t = 300000 + 3 * 4950.
// CHECK: 24576
// CHECK-NEXT: 314850
// CHECK-NEXT: 0
// Blocks along t (store dimension 0) with l inside each block: a block is
// 64 points of every layer (3 pages); 2 blocks.
// CHECK-NEXT: 24576
// CHECK-NEXT: 314850
// CHECK-NEXT: 0
// A window of 4 along t (dimension 1) per layer: 3 * 8 slots * 64 bytes;
// the range 96:100 of each layer is one view: 3 * (4 * 96 + 6) + 4 * 3000.
// CHECK-NEXT: 1536
// CHECK-NEXT: 13170
// CHECK-NEXT: 0
memref.global @tempo_memory_stats : memref<2xi64> = dense<0>
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %L = arith.constant 3 : index
  %T = arith.constant 100 : index
  %zero = arith.constant 0 : i64
  %stats = memref.get_global @tempo_memory_stats : memref<2xi64>

  %b = "store.alloc"(%L, %T) {kind = "blocks", extent = 64 : i64, along = 1 : i64} : (index, index) -> memref<?x?x8xi64>
  scf.for %t = %c0 to %T step %c1 {
    scf.for %l = %c0 to %L step %c1 {
      %w = "store.write"(%b, %l, %t) : (memref<?x?x8xi64>, index, index) -> memref<8xi64, strided<[1], offset: ?>>
      %v = func.call @value(%l, %t) : (index, index) -> i64
      linalg.fill ins(%v : i64) outs(%w : memref<8xi64, strided<[1], offset: ?>>)
      "store.seal"(%b, %l, %t) : (memref<?x?x8xi64>, index, index) -> ()
    }
  }
  %live = memref.load %stats[%c0] : memref<2xi64>
  vector.print %live : i64
  %sum = scf.for %l = %c0 to %L step %c1 iter_args(%acc = %zero) -> i64 {
    %layer = "store.read_range"(%b, %l, %c0, %T) {ranged = [false, true]} : (memref<?x?x8xi64>, index, index, index) -> memref<?x8xi64, strided<[8, 1], offset: ?>>
    %part = func.call @total(%layer, %T) : (memref<?x8xi64, strided<[8, 1], offset: ?>>, index) -> i64
    %next = arith.addi %acc, %part : i64
    scf.yield %next : i64
  }
  vector.print %sum : i64
  "store.free"(%b) : (memref<?x?x8xi64>) -> ()
  %after = memref.load %stats[%c0] : memref<2xi64>
  vector.print %after : i64

  %i = "store.alloc"(%T, %L) {kind = "blocks", extent = 64 : i64} : (index, index) -> memref<?x?x8xi64>
  scf.for %t = %c0 to %T step %c1 {
    scf.for %l = %c0 to %L step %c1 {
      %w = "store.write"(%i, %t, %l) : (memref<?x?x8xi64>, index, index) -> memref<8xi64, strided<[1], offset: ?>>
      %v = func.call @value(%l, %t) : (index, index) -> i64
      linalg.fill ins(%v : i64) outs(%w : memref<8xi64, strided<[1], offset: ?>>)
      "store.seal"(%i, %t, %l) : (memref<?x?x8xi64>, index, index) -> ()
    }
  }
  %live2 = memref.load %stats[%c0] : memref<2xi64>
  vector.print %live2 : i64
  %sum2 = scf.for %l = %c0 to %L step %c1 iter_args(%acc = %zero) -> i64 {
    %layer = "store.read_range"(%i, %c0, %T, %l) {ranged = [true, false]} : (memref<?x?x8xi64>, index, index, index) -> memref<?x8xi64, strided<[?, 1], offset: ?>>
    %dense = memref.alloc(%T) : memref<?x8xi64>
    memref.copy %layer, %dense : memref<?x8xi64, strided<[?, 1], offset: ?>> to memref<?x8xi64>
    %cast = memref.cast %dense : memref<?x8xi64> to memref<?x8xi64, strided<[8, 1], offset: ?>>
    %part = func.call @total(%cast, %T) : (memref<?x8xi64, strided<[8, 1], offset: ?>>, index) -> i64
    memref.dealloc %dense : memref<?x8xi64>
    %next = arith.addi %acc, %part : i64
    scf.yield %next : i64
  }
  vector.print %sum2 : i64
  "store.free"(%i) : (memref<?x?x8xi64>) -> ()
  %after2 = memref.load %stats[%c0] : memref<2xi64>
  vector.print %after2 : i64

  %win = "store.alloc"(%L) {kind = "window", extent = 4 : i64, along = 1 : i64} : (index) -> memref<?x8x8xi64>
  scf.for %t = %c0 to %T step %c1 {
    scf.for %l = %c0 to %L step %c1 {
      %w = "store.write"(%win, %l, %t) : (memref<?x8x8xi64>, index, index) -> memref<8xi64, strided<[1], offset: ?>>
      %v = func.call @value(%l, %t) : (index, index) -> i64
      linalg.fill ins(%v : i64) outs(%w : memref<8xi64, strided<[1], offset: ?>>)
      "store.seal"(%win, %l, %t) : (memref<?x8x8xi64>, index, index) -> ()
    }
  }
  %peak = memref.load %stats[%c0] : memref<2xi64>
  vector.print %peak : i64
  %c4 = arith.constant 4 : index
  %c96 = arith.constant 96 : index
  %sum3 = scf.for %l = %c0 to %L step %c1 iter_args(%acc = %zero) -> i64 {
    %last = "store.read_range"(%win, %l, %c96, %c4) {ranged = [false, true]} : (memref<?x8x8xi64>, index, index, index) -> memref<?x8xi64, strided<[8, 1], offset: ?>>
    %part = func.call @total(%last, %c4) : (memref<?x8xi64, strided<[8, 1], offset: ?>>, index) -> i64
    %next = arith.addi %acc, %part : i64
    scf.yield %next : i64
  }
  vector.print %sum3 : i64
  "store.free"(%win) : (memref<?x8x8xi64>) -> ()
  %after3 = memref.load %stats[%c0] : memref<2xi64>
  vector.print %after3 : i64
  return
}

func.func @value(%l: index, %t: index) -> i64 {
  %c1000 = arith.constant 1000 : index
  %scaled = arith.muli %l, %c1000 : index
  %sum = arith.addi %scaled, %t : index
  %v = arith.index_cast %sum : index to i64
  return %v : i64
}

// Sum of element 7 of the first n points of a view.
func.func @total(%view: memref<?x8xi64, strided<[8, 1], offset: ?>>, %n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0 : i64
  %sum = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %zero) -> i64 {
    %v = memref.load %view[%t, %c7] : memref<?x8xi64, strided<[8, 1], offset: ?>>
    %next = arith.addi %acc, %v : i64
    scf.yield %next : i64
  }
  return %sum : i64
}
