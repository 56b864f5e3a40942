"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%c = "arith.constant"() {value = 1 : i64} : () -> i64
"temporal.output"(%c) : (i64) -> ()
