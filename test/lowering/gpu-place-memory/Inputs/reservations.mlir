// Two block stores reserved by lower-store-to-memref: the first used only
// by a kernel, the second read by host code through its descriptor.
module attributes {gpu.container_module} {
  func.func private @mmap(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
  func.func private @mprotect(!llvm.ptr, i64, i32) -> i32
  func.func private @munmap(!llvm.ptr, i64) -> i32
  func.func @g(%bytes: i64) -> f32 {
    %null = llvm.mlir.zero : !llvm.ptr
    %c0 = arith.constant 0 : i32
    %c3 = arith.constant 3 : i32
    %z = arith.constant 0 : i64
    %c8 = arith.constant 8 : i64
    %c1 = arith.constant 1 : i64
    %i0 = arith.constant 0 : index
    %i1 = arith.constant 1 : index
    %device = func.call @mmap(%null, %bytes, %c0, %c0, %c0, %z) : (!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
    %shared = func.call @mmap(%null, %bytes, %c0, %c0, %c0, %z) : (!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
    %d0 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %d1 = llvm.insertvalue %device, %d0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %d2 = llvm.insertvalue %device, %d1[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %d3 = llvm.insertvalue %z, %d2[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %d4 = llvm.insertvalue %c8, %d3[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %d5 = llvm.insertvalue %c1, %d4[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %store = builtin.unrealized_conversion_cast %d5 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<8xf32>
    %s0 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %s1 = llvm.insertvalue %shared, %s0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %s2 = llvm.insertvalue %shared, %s1[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %s3 = llvm.insertvalue %z, %s2[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %s4 = llvm.insertvalue %c8, %s3[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %s5 = llvm.insertvalue %c1, %s4[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %host = builtin.unrealized_conversion_cast %s5 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<8xf32>
    %p = memref.extract_aligned_pointer_as_index %store : memref<8xf32> -> index
    %pi = arith.index_cast %p : index to i64
    %pp = llvm.inttoptr %pi : i64 to !llvm.ptr
    %m = func.call @mprotect(%pp, %bytes, %c3) : (!llvm.ptr, i64, i32) -> i32
    %view = memref.subview %store[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
    gpu.launch_func @kernels::@k blocks in (%i1, %i1, %i1) threads in (%i1, %i1, %i1) args(%view : memref<4xf32, strided<[1], offset: 2>>)
    %x = memref.load %host[%i0] : memref<8xf32>
    %u = func.call @munmap(%device, %bytes) : (!llvm.ptr, i64) -> i32
    %v = func.call @munmap(%shared, %bytes) : (!llvm.ptr, i64) -> i32
    return %x : f32
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32, strided<[1], offset: 2>>) kernel {
      gpu.return
    }
  }
}
