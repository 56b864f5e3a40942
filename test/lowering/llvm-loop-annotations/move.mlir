// llvm-loop-annotations moves the loop hint a kernel set on its scf.for
// (the discardable llvm.loop_annotation, which convert-scf-to-cf and
// convert-to-llvm carry to the back edge's llvm.br) into the branch's own
// loop_annotation, which the translation makes !llvm.loop metadata; a
// branch without the hint, and the hint on an op that is not a branch, are
// left as they are. (The pass has no failure: what it does not know, it
// leaves.)
// RUN: tempo-opt %s --llvm-loop-annotations | FileCheck %s
// RUN: tempo-opt %s --llvm-loop-annotations | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: mlir-translate --mlir-to-llvmir %s | FileCheck %s --check-prefix=BEFORE

// CHECK-LABEL: llvm.func @sum
// CHECK: llvm.br ^bb1(%{{.*}}, %{{.*}} : i64, f32){{$}}
// CHECK: llvm.br ^bb1(%{{.*}}, %{{.*}} : i64, f32) {loop_annotation = #{{.*}}}
// CHECK-NOT: llvm.loop_annotation =
// CHECK-LABEL: llvm.func @other
// CHECK: llvm.return {llvm.loop_annotation = #{{.*}}}

// IR: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// IR: ![[LOOP]] = distinct !{![[LOOP]], ![[COUNT:[0-9]+]]}
// IR: ![[COUNT]] = !{!"llvm.loop.unroll.count", i32 4}

// BEFORE-NOT: llvm.loop

#unroll = #llvm.loop_unroll<count = 4 : i32>
#hint = #llvm.loop_annotation<unroll = #unroll>
module {
  llvm.func @sum(%p: !llvm.ptr, %n: i64) -> f32 {
    %c0 = llvm.mlir.constant(0 : index) : i64
    %c1 = llvm.mlir.constant(1 : index) : i64
    %z = llvm.mlir.constant(0.000000e+00 : f32) : f32
    llvm.br ^bb1(%c0, %z : i64, f32)
  ^bb1(%i: i64, %acc: f32):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^bb2, ^bb3
  ^bb2:
    %a = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %a : !llvm.ptr -> f32
    %s = llvm.fadd %acc, %v : f32
    %next = llvm.add %i, %c1 : i64
    llvm.br ^bb1(%next, %s : i64, f32) {llvm.loop_annotation = #hint}
  ^bb3:
    llvm.return %acc : f32
  }
  llvm.func @other() {
    llvm.return {llvm.loop_annotation = #hint}
  }
}
