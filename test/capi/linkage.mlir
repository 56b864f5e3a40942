// One shared MLIR (issue 25): the C API library and the tools link
// Debian's libMLIR.so (and MLIR's C API as the libMLIR-C.so the build makes
// from Debian's archives), and none carries a copy of MLIR: the library
// defines only its own entry points (tempo*, the two dialect handles and
// the plug-in's mlirGetPassPluginInfo), the tools no MLIR or LLVM symbol.
// Two copies of MLIR in one process (a host loading the library) would
// break type identity and the pass registry.
// RUN: ldd %tempo_capi | FileCheck %s --check-prefix=LINKS
// RUN: ldd %tool_dir/tempo-opt | FileCheck %s --check-prefix=LINKS
// RUN: ldd %tool_dir/tempo-run | FileCheck %s --check-prefix=LINKS
// RUN: nm -D --defined-only %tempo_capi | FileCheck %s --check-prefix=LIBRARY
// RUN: nm -D --defined-only %tool_dir/tempo-opt | FileCheck %s --allow-empty --check-prefix=TOOL
// RUN: nm -D --defined-only %tool_dir/tempo-run | FileCheck %s --allow-empty --check-prefix=TOOL
// Small, as they carry no MLIR (each tool was about 230 MB with its own
// copy): under 100 MB, eight digits at most.
// RUN: stat -c %%s %tool_dir/tempo-opt | FileCheck %s --check-prefix=SIZE
// RUN: stat -c %%s %tempo_capi | FileCheck %s --check-prefix=SIZE

// LINKS-DAG: libMLIR-C.so => {{.*}}mlir-c/libMLIR-C.so
// LINKS-DAG: libMLIR.so.22.1 => /usr/lib/llvm-22/lib/libMLIR.so.22.1
// LINKS-DAG: libLLVM.so.22.1 => /usr/lib/llvm-22/lib/libLLVM.so.22.1
// LINKS-NOT: not found

// LIBRARY-NOT: {{ (_ZN4mlir|_ZN4llvm|LLVM|mlir[A-FH-Z])}}
// LIBRARY: mlirGetDialectHandle__store__
// LIBRARY-NEXT: mlirGetDialectHandle__temporal__
// LIBRARY-NEXT: mlirGetPassPluginInfo
// LIBRARY-NOT: {{ (_ZN4mlir|_ZN4llvm|LLVM|mlir)}}

// SIZE: {{^[0-9]{1,8}$}}

// TOOL-NOT: {{ (_ZN4mlir|_ZN4llvm|LLVM|mlir)}}
