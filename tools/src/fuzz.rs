//! Generation of hostile inputs for the fuzzing harness (`tempo-fuzz`):
//! mutations of seed programs (byte flips, deletions, token swaps, affine
//! edits, type and shape changes, attribute changes, op renames, deep
//! nesting), bad command lines, and bad `.npy` files. Everything is a pure
//! function of the seed, so a case is reproduced by its number.

use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;

/// A seeded random source for one case.
pub type CaseRng = ChaCha8Rng;

/// The random source of case `case` of a run seeded with `seed`.
pub fn case_rng(seed: u64, case: u64) -> CaseRng {
    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ case.wrapping_mul(0xbf58_476d_1ce4_e5b9))
}

/// One lexical token of MLIR text, as a byte range.
#[derive(Clone, Copy, Debug)]
struct Token {
    start: usize,
    end: usize,
}

/// Splits MLIR text into identifier/number/string/punctuation tokens
/// (whitespace and comments are not tokens).
fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'"' {
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
            out.push(Token { start, end: i });
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'%' || c == b'.' || c == b'@' || c == b'#' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'_' | b'%' | b'.' | b'@' | b'#' | b'$'))
            {
                i += 1;
            }
            out.push(Token { start, end: i });
        } else {
            // One byte of punctuation (UTF-8 continuation bytes stay with
            // their lead byte).
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i] & 0xC0) == 0x80 {
                i += 1;
            }
            out.push(Token { start, end: i });
        }
    }
    out
}

/// Temporal ops a rename may pick.
const OP_NAMES: &[&str] = &[
    "temporal.add",
    "temporal.sub",
    "temporal.mul",
    "temporal.div",
    "temporal.max",
    "temporal.min",
    "temporal.neg",
    "temporal.exp",
    "temporal.log",
    "temporal.sqrt",
    "temporal.tanh",
    "temporal.sigmoid",
    "temporal.relu",
    "temporal.abs",
    "temporal.pow",
    "temporal.and",
    "temporal.or",
    "temporal.not",
    "temporal.cmp",
    "temporal.select",
    "temporal.cast",
    "temporal.reduce_sum",
    "temporal.reduce_max",
    "temporal.reduce_mean",
    "temporal.argmax",
    "temporal.cumsum",
    "temporal.permute",
    "temporal.flip",
    "temporal.slice",
    "temporal.reshape",
    "temporal.expand",
    "temporal.concat",
    "temporal.gather",
    "temporal.random",
    "temporal.arange",
    "temporal.rank",
    "temporal.world_size",
    "temporal.all_reduce",
    "temporal.matmul",
    "temporal.einsum",
    "temporal.dynamic_slice",
    "temporal.read",
    "temporal.read_range",
    "temporal.constant",
    "temporal.tensor",
    "temporal.input",
    "temporal.dim",
    "temporal.define",
    "temporal.output",
    "temporal.compute",
    "temporal.call",
    "store.alloc",
    "store.write",
    "store.read",
    "store.free",
    "gpu.yield",
    "func.return",
    "arith.addf",
    "temporal.bogus",
    "builtin.module",
];

const ELEMENT_TYPES: &[&str] = &["f32", "f64", "i32", "i64", "i1", "i8", "f16", "index", "bf16", "i0", "complex<f32>"];

const SPECIAL_NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "64",
    "-7",
    "255",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "4611686018427387904",
    "1e38",
    "1.0e309",
    "-0.0",
    "0x7FC00000",
    "nan",
    "inf",
];

const ATTRIBUTE_VALUES: &[&str] = &[
    "\"\"",
    "\"\\00\"",
    "\"t\"",
    "\"T\"",
    "\"x\"",
    "\"x\\00y\"",
    "\"\u{e9}\u{1F600}\"",
    "[]",
    "[\"t\", \"t\"]",
    "[\"t\", \"b\"]",
    "[\"nope\"]",
    "[1, 2]",
    "0",
    "-1",
    "true",
    "unit",
    "\"lt\"",
    "\"gt\"",
    "\"bogus\"",
    "\"uniform\"",
    "\"normal\"",
    "\"cauchy\"",
    "tensor<f32>",
    "tensor<?xf32>",
    "tensor<0xf32>",
    "tensor<4611686018427387904xf32>",
    "affine_map<(t)[T] -> (t)>",
    "affine_map<(t)[T] -> (t + 1)>",
    "affine_map<(t)[T] -> (T - 1 - t)>",
    "affine_map<(t)[T] -> (t floordiv 0)>",
    "affine_map<(t)[T] -> (t mod -2)>",
    "affine_map<(t)[T] -> (t, t)>",
    "affine_map<() -> ()>",
    "affine_set<(t)[T] : (t == 0)>",
    "affine_set<(t)[T] : (t - T >= 0)>",
    "affine_set<(t)[T] : (1 == 0)>",
    "affine_set<(t)[T] : (t mod 2 == 0)>",
    "dense<0> : tensor<i64>",
    "dense<1.0> : tensor<f32>",
    "dense<[1, 2]> : tensor<2xi32>",
    "dense<0x7FC00000> : tensor<f32>",
    "dense<3.0e38> : tensor<f32>",
    "dense<-3.0e38> : tensor<f32>",
];

/// Names of the mutation operators, for reports.
pub const MUTATIONS: &[&str] = &[
    "byte-flip",
    "delete-span",
    "duplicate-span",
    "token-swap",
    "token-copy",
    "affine-edit",
    "number-edit",
    "type-change",
    "shape-change",
    "attribute-change",
    "op-rename",
    "line-delete",
    "line-duplicate",
    "line-swap",
    "deep-nesting",
    "insert-garbage",
    "truncate",
    "constant-extreme",
    "constant-extreme",
    "add-output",
    "op-swap",
    "op-swap",
    "name-change",
    "affine-edit",
    "number-edit",
];

const UNARY_OPS: &[&str] = &[
    "temporal.neg",
    "temporal.exp",
    "temporal.log",
    "temporal.sqrt",
    "temporal.tanh",
    "temporal.sigmoid",
    "temporal.relu",
    "temporal.sin",
    "temporal.cos",
    "temporal.abs",
    "temporal.not",
    "temporal.cast",
];

const BINARY_OPS: &[&str] = &[
    "temporal.add",
    "temporal.sub",
    "temporal.mul",
    "temporal.div",
    "temporal.max",
    "temporal.min",
    "temporal.pow",
    "temporal.and",
    "temporal.or",
    "temporal.matmul",
];

const REDUCTIONS: &[&str] =
    &["temporal.reduce_sum", "temporal.reduce_max", "temporal.reduce_mean", "temporal.argmax", "temporal.cumsum"];

/// Applies one randomly chosen mutation to `text`; returns its name.
pub fn mutate(bytes: &mut Vec<u8>, rng: &mut CaseRng) -> &'static str {
    let which = rng.random_range(0..MUTATIONS.len());
    let name = MUTATIONS[which];
    match name {
        "byte-flip" | "delete-span" | "duplicate-span" | "truncate" => mutate_bytes(name, bytes, rng),
        _ => {
            // Text-level mutations see invalid UTF-8 as U+FFFD.
            let mut text = String::from_utf8_lossy(bytes).into_owned();
            mutate_text(name, &mut text, rng);
            *bytes = text.into_bytes();
        }
    }
    name
}

/// Mutations of raw bytes (the result need not be UTF-8).
fn mutate_bytes(name: &str, bytes: &mut Vec<u8>, rng: &mut CaseRng) {
    match name {
        "byte-flip" => {
            if !bytes.is_empty() {
                for _ in 0..rng.random_range(1..4) {
                    let i = rng.random_range(0..bytes.len());
                    bytes[i] = match rng.random_range(0..4) {
                        0 => 0,
                        1 => rng.random_range(0x80..=0xFF),
                        2 => *b"()[]{}<>:=,%\"-+".choose(rng).unwrap_or(&b'x'),
                        _ => bytes[i] ^ (1 << rng.random_range(0..7)),
                    };
                }
            }
        }
        "delete-span" => {
            if !bytes.is_empty() {
                let start = rng.random_range(0..bytes.len());
                let len = rng.random_range(1..=64.min(bytes.len() - start));
                bytes.drain(start..start + len);
            }
        }
        "duplicate-span" => {
            if !bytes.is_empty() {
                let start = rng.random_range(0..bytes.len());
                let len = rng.random_range(1..=200.min(bytes.len() - start));
                let span = bytes[start..start + len].to_vec();
                let at = rng.random_range(0..=bytes.len());
                bytes.splice(at..at, span);
            }
        }
        _ => {
            let at = if bytes.is_empty() { 0 } else { rng.random_range(0..bytes.len()) };
            bytes.truncate(at);
        }
    }
}

/// Mutations of text (token, attribute, type and line edits).
fn mutate_text(name: &str, text: &mut String, rng: &mut CaseRng) {
    let toks = tokens(text);
    match name {
        "token-swap" if toks.len() >= 2 => {
            let a = toks[rng.random_range(0..toks.len())];
            let b = toks[rng.random_range(0..toks.len())];
            let (a, b) = if a.start <= b.start { (a, b) } else { (b, a) };
            if a.end <= b.start {
                let ta = text[a.start..a.end].to_string();
                let tb = text[b.start..b.end].to_string();
                text.replace_range(b.start..b.end, &ta);
                text.replace_range(a.start..a.end, &tb);
            }
        }
        "token-copy" if !toks.is_empty() => {
            let from = toks[rng.random_range(0..toks.len())];
            let to = toks[rng.random_range(0..toks.len())];
            let replacement = text[from.start..from.end].to_string();
            text.replace_range(to.start..to.end, &replacement);
        }
        "affine-edit" => affine_edit(text, rng),
        "number-edit" => {
            let numbers: Vec<_> = toks.iter().filter(|t| text.as_bytes()[t.start].is_ascii_digit()).copied().collect();
            if let Some(t) = numbers.choose(rng) {
                let n = SPECIAL_NUMBERS.choose(rng).copied().unwrap_or("0");
                replace_bytes(text, t.start, t.end, n);
            }
        }
        "type-change" => {
            let types: Vec<_> = toks
                .iter()
                .filter(|t| ELEMENT_TYPES.contains(&&text[t.start..t.end]) || text[t.start..t.end].ends_with("xf32"))
                .copied()
                .collect();
            if let Some(t) = types.choose(rng) {
                let new = ELEMENT_TYPES.choose(rng).copied().unwrap_or("f32");
                let old = text[t.start..t.end].to_string();
                let replacement = match old.rfind('x') {
                    Some(x) if old.ends_with("f32") => format!("{}{new}", &old[..=x]),
                    _ => new.to_string(),
                };
                replace_bytes(text, t.start, t.end, &replacement);
            }
        }
        "shape-change" => shape_change(text, rng),
        "attribute-change" => {
            // `key = value` inside an attribute dictionary: replace the value
            // up to the next `,` or `}` at the same nesting level.
            let keys: Vec<usize> = text.match_indices(" = ").map(|(i, _)| i + 3).collect();
            if let Some(&start) = keys.choose(rng) {
                let end = value_end(text, start);
                let value = ATTRIBUTE_VALUES.choose(rng).copied().unwrap_or("\"\"");
                replace_bytes(text, start, end, value);
            }
        }
        "op-rename" => {
            let names: Vec<_> = text.match_indices("\"temporal.").map(|(i, _)| i + 1).collect();
            if let Some(&start) = names.choose(rng) {
                let end = text[start..].find('"').map_or(start, |e| start + e);
                let new = OP_NAMES.choose(rng).copied().unwrap_or("temporal.add");
                replace_bytes(text, start, end, new);
            }
        }
        "line-delete" | "line-duplicate" | "line-swap" => {
            let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
            if lines.len() >= 2 {
                let a = rng.random_range(0..lines.len());
                let b = rng.random_range(0..lines.len());
                match name {
                    "line-delete" => {
                        lines.remove(a);
                    }
                    "line-duplicate" => {
                        let line = lines[a].clone();
                        lines.insert(b, line);
                    }
                    _ => lines.swap(a, b),
                }
                *text = lines.join("\n");
            }
        }
        "deep-nesting" => {
            let depth = *[100usize, 1000, 5000, 50_000, 200_000].choose(rng).unwrap_or(&1000);
            let (open, close) =
                *[("[", "]"), ("{", "}"), ("(", ")"), ("<", ">"), ("module {", "}")].choose(rng).unwrap_or(&("[", "]"));
            let nested = format!("{}{}", open.repeat(depth), close.repeat(depth));
            let at = if text.is_empty() { 0 } else { rng.random_range(0..text.len()) };
            let at = floor_char_boundary(text, at);
            let snippet = match rng.random_range(0..3) {
                0 => nested,
                1 => format!("\"temporal.constant\"() {{value = dense<{nested}> : tensor<f32>}} : () -> tensor<f32>\n"),
                _ => format!("module attributes {{a = {nested}}} {{}}\n"),
            };
            text.insert_str(at, &snippet);
        }
        "insert-garbage" => {
            let garbage = ["\0", "\u{FEFF}", "}", "{", "%", "\"", "^bb0:", "// -----", "#map = ", "!temporal.rtensor"]
                .choose(rng)
                .copied()
                .unwrap_or("\0");
            let at = floor_char_boundary(text, if text.is_empty() { 0 } else { rng.random_range(0..text.len()) });
            text.insert_str(at, garbage);
        }
        "constant-extreme" => {
            // Extreme values of the constant's own element type.
            let sites: Vec<usize> =
                text.match_indices("value = dense<").map(|(i, _)| i + "value = dense<".len()).collect();
            if let Some(&start) = sites.choose(rng) {
                let Some(close) = text[start..].find("> : tensor<").map(|i| start + i) else { return };
                let element =
                    text[close..].split(['x', '<', '>']).find(|p| matches!(*p, "f32" | "f64" | "i32" | "i64" | "i1"));
                let value = match element {
                    Some("f32") => {
                        ["0x7FC00000", "0x7F800000", "0xFF800000", "3.0e38", "-3.0e38", "1.0e-45", "-0.0", "1.0e10"]
                            .choose(rng)
                            .copied()
                    }
                    Some("f64") => {
                        ["0x7FF8000000000000", "0x7FF0000000000000", "1.0e308", "-1.0e308", "5.0e-324", "1.0e19"]
                            .choose(rng)
                            .copied()
                    }
                    Some("i32") => ["2147483647", "-2147483648", "0", "-1"].choose(rng).copied(),
                    Some("i64") => ["9223372036854775807", "-9223372036854775808", "0", "-1"].choose(rng).copied(),
                    Some("i1") => ["true", "false"].choose(rng).copied(),
                    _ => None,
                };
                if let Some(v) = value {
                    replace_bytes(text, start, close, v);
                }
            }
        }
        "add-output" => {
            // Mark another declared tensor (or input) as an output.
            let handles: Vec<String> = text
                .match_indices(" = \"temporal.")
                .filter(|(i, _)| {
                    text[*i..].starts_with(" = \"temporal.tensor\"") || text[*i..].starts_with(" = \"temporal.input\"")
                })
                .filter_map(|(i, _)| {
                    let start = text[..i].rfind('%')?;
                    Some(text[start..i].to_string())
                })
                .collect();
            if let Some(h) = handles.choose(rng) {
                let line = format!("\n  \"temporal.output\"({h}) : (!temporal.rtensor) -> ()\n");
                match text.rfind('}') {
                    Some(end) => text.insert_str(end, &line),
                    None => text.push_str(&line),
                }
            }
        }
        "op-swap" => {
            // Another op of the same arity, so the program often stays valid.
            let groups = [UNARY_OPS, BINARY_OPS, REDUCTIONS];
            let mut sites: Vec<(usize, usize, usize)> = Vec::new();
            for (g, ops) in groups.iter().enumerate() {
                for op in ops.iter() {
                    let quoted = format!("\"{op}\"");
                    sites.extend(text.match_indices(&quoted).map(|(i, _)| (g, i + 1, i + 1 + op.len())));
                }
            }
            if let Some(&(g, start, end)) = sites.choose(rng) {
                let new = groups[g].choose(rng).copied().unwrap_or("temporal.add");
                replace_bytes(text, start, end, new);
            }
        }
        "name-change" => {
            let sites: Vec<usize> = text
                .match_indices("sym_name = \"")
                .chain(text.match_indices("bound = \""))
                .map(|(i, m)| i + m.len())
                .collect();
            if let Some(&start) = sites.choose(rng) {
                let end = text[start..].find('"').map_or(start, |e| start + e);
                let new = ["", "\\00", "a b", "x", "t", "T", "../x", "9x", "\u{e9}", "very.long-name$1", "%x"]
                    .choose(rng)
                    .copied()
                    .unwrap_or("");
                replace_bytes(text, start, end, new);
            }
        }
        _ => {}
    }
}

/// Edits inside `affine_map<...>` / `affine_set<...>`: shifts, sign flips,
/// new constants, swapped variables, divisions by zero or negatives.
fn affine_edit(text: &mut String, rng: &mut CaseRng) {
    let sites: Vec<usize> =
        text.match_indices("affine_map<").chain(text.match_indices("affine_set<")).map(|(i, _)| i).collect();
    let Some(&start) = sites.choose(rng) else { return };
    let Some(arrow) = text[start..].find(['>', ':']).map(|i| start + i) else { return };
    let Some(end) = text[arrow..].find(">}").or_else(|| text[arrow..].find('>')).map(|i| arrow + i) else { return };
    if end <= arrow + 1 {
        return;
    }
    let body = &text[arrow + 1..end];
    let edits = [
        " - 1",
        " + 1",
        " + 2",
        " - 3",
        " * 2",
        " * -1",
        " floordiv 2",
        " floordiv 0",
        " mod 0",
        " mod -3",
        " + 9223372036854775807",
        " - T",
        " + T",
        " ceildiv 0",
    ];
    let new_body = match rng.random_range(0..5) {
        0 => {
            // Append an offset to a random result/constraint.
            let pieces: Vec<&str> = body.split(',').collect();
            let k = rng.random_range(0..pieces.len());
            let edit = edits.choose(rng).copied().unwrap_or(" - 1");
            pieces
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    if i == k {
                        let trimmed = p.trim_end_matches([')', ' ']);
                        format!("{trimmed}{edit}{}", &p[trimmed.len()..])
                    } else {
                        p.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        }
        1 => body.replacen(" - ", " + ", 1),
        2 => body.replacen(" + ", " - ", 1),
        3 => body.replacen(">= 0", "== 0", 1).replacen("== 0", ">= 0", 1),
        _ => body.replacen('t', "T", 1),
    };
    replace_bytes(text, arrow + 1, end, &new_body);
}

/// Changes a static dimension in a `tensor<...>` type.
fn shape_change(text: &mut String, rng: &mut CaseRng) {
    let sites: Vec<usize> = text.match_indices("tensor<").map(|(i, _)| i + "tensor<".len()).collect();
    let Some(&start) = sites.choose(rng) else { return };
    let Some(end) = text[start..].find('>').map(|i| start + i) else { return };
    let body = text[start..end].to_string();
    let mut parts: Vec<String> = body.split('x').map(str::to_string).collect();
    let new_dim =
        ["0", "1", "2", "3", "5", "?", "4611686018427387904", "100000", "-1"].choose(rng).copied().unwrap_or("1");
    match rng.random_range(0..3) {
        0 if parts.len() > 1 => {
            let k = rng.random_range(0..parts.len() - 1);
            parts[k] = new_dim.to_string();
        }
        1 if parts.len() > 1 => {
            let k = rng.random_range(0..parts.len() - 1);
            parts.remove(k);
        }
        _ => parts.insert(0, new_dim.to_string()),
    }
    replace_bytes(text, start, end, &parts.join("x"));
}

/// The end of an attribute value starting at `start`: the next `,` or `}` at
/// nesting depth zero.
fn value_end(text: &str, start: usize) -> usize {
    let mut depth = 0i32;
    let mut in_string = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '<' | '[' | '(' | '{' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
            '}' if depth == 0 => return start + i,
            '}' => depth -= 1,
            ',' if depth == 0 => return start + i,
            '\n' => return start + i,
            _ => {}
        }
    }
    text.len()
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Replaces `start..end` (clamped to character boundaries) with `with`.
fn replace_bytes(text: &mut String, start: usize, end: usize, with: &str) {
    let end = floor_char_boundary(text, end);
    let start = floor_char_boundary(text, start.min(end));
    text.replace_range(start..end, with);
}

/// The bound names a program declares (`bound = "T"`).
pub fn bound_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, _) in text.match_indices("bound = \"") {
        let rest = &text[i + "bound = \"".len()..];
        if let Some(end) = rest.find('"') {
            let name = rest[..end].to_string();
            // Only identifiers: a mangled name belongs to the program (and
            // its located error), not to a garbled command line.
            let identifier = tempo_passes::program::check_name(&name).is_ok();
            if identifier && name.len() < 32 && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// A bad command line for `tempo-run`, given the program path and its
/// bound names (replacing a good `--bound` list).
pub fn bad_run_arguments(rng: &mut CaseRng, program: &str, bounds: &[String]) -> Vec<String> {
    let bound = bounds.first().cloned().unwrap_or_else(|| "T".into());
    let choices: Vec<Vec<String>> = vec![
        vec![program.into(), "--bound".into(), format!("{bound}=-1")],
        vec![program.into(), "--bound".into(), format!("{bound}=0")],
        vec![program.into(), "--bound".into(), format!("{bound}=2147483648")],
        vec![program.into(), "--bound".into(), format!("{bound}=9223372036854775807")],
        vec![program.into(), "--bound".into(), format!("{bound}=99999999999999999999")],
        vec![program.into(), "--bound".into(), format!("{bound}=1e3")],
        vec![program.into(), "--bound".into(), format!("{bound}")],
        vec![program.into(), "--bound".into(), "=3".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--bound".into(), format!("{bound}=4")],
        vec![program.into(), "--bound".into(), "NOPE=3".into()],
        vec![program.into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--input".into(), "x=/nonexistent.npy".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--input".into(), "nope=/dev/null".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--format".into(), "xml".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "-O".into(), "9".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--output-dir".into(), "/proc/nope".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--seed".into(), "-5".into()],
        vec!["/nonexistent.mlir".into(), "--bound".into(), format!("{bound}=3")],
        vec!["/".into(), "--bound".into(), format!("{bound}=3")],
        vec!["--bound".into()],
        vec![],
        vec![program.into(), "--bogus".into()],
        vec![program.into(), "--bound".into(), format!("{bound}=3\0")],
        vec![program.into(), "--bound".into(), format!("{bound}=3"), "--bound".into(), "\u{e9}=1".into()],
    ];
    // A memory budget from nothing up (the swap plan and the tiling of
    // attention follow it; results must not change), and bad ones.
    let budgets = ["0", "1", "64", "4096", "65536", "1048576", "1000000000", "-1", "lots", "18446744073709551616"];
    if rng.random_range(0..3) == 0 {
        let budget = budgets.choose(rng).copied().unwrap_or("0");
        let steps = rng.random_range(1..=8);
        let mut args = vec![program.to_string()];
        for b in bounds {
            args.extend(["--bound".to_string(), format!("{b}={steps}")]);
        }
        args.extend(["--memory-budget".to_string(), budget.to_string()]);
        return args;
    }
    choices.choose(rng).cloned().unwrap_or_default()
}

/// A bad command line for `tempo-opt` on `program`.
pub fn bad_opt_arguments(rng: &mut CaseRng, program: &str) -> Vec<String> {
    let pipelines = [
        "bogus-pass",
        "builtin.module(",
        "builtin.module(temporal-verify",
        "temporal-verify)",
        "temporal-verify{",
        "temporal-check-points{bounds=T=-1}",
        "temporal-check-points{bounds=T=99999999999999999999}",
        "temporal-check-points{bounds=}",
        "temporal-check-points{bounds=T}",
        "temporal-check-points{nope=1}",
        "func.func(temporal-verify)",
        "canonicalize{max-iterations=-1}",
        "canonicalize{bogus=1}",
        "builtin.module(func.func(cse,,))",
        "temporal-to-llvm,temporal-to-llvm",
        "lower-store-to-memref",
        "lower-temporal-to-loops,lower-temporal-to-loops",
        "temporal-select-stores,temporal-select-stores,temporal-select-stores",
        "temporal-schedule,temporal-schedule",
        "lower-loops-to-llvm",
        "",
        " ",
        ",",
        "{}",
        "()",
        "builtin.module(builtin.module(builtin.module(temporal-verify)))",
        "\0",
        "\u{e9}",
    ];
    let pipeline = pipelines.choose(rng).copied().unwrap_or("bogus");
    match rng.random_range(0..5) {
        0 => vec![program.into(), "-p".into(), pipeline.into()],
        1 => vec![program.into(), format!("--{pipeline}")],
        2 => vec![program.into(), "--split-input-file".into(), "-p".into(), pipeline.into()],
        3 => vec![program.into(), "-o".into(), "/proc/nope/out.mlir".into()],
        _ => vec![program.into(), "--bogus-flag".into(), "-x".into()],
    }
}

/// Bytes of a bad (or, rarely, good) `.npy` file for an array of `shape`.
pub fn bad_npy(rng: &mut CaseRng, shape: &[usize], descr: &str, item: usize) -> Vec<u8> {
    let shape_text = match shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    };
    let count: usize = shape.iter().product();
    let mut descr = descr.to_string();
    let mut fortran = "False".to_string();
    let mut shape_field = shape_text.clone();
    let mut extra = String::new();
    let mut data_len = count * item;
    let mut magic = b"\x93NUMPY".to_vec();
    let mut version = [1u8, 0];
    let mut dict_override = None;
    let mut header_len_delta: i64 = 0;
    match rng.random_range(0..18) {
        0 => magic = b"\x93NUMPX".to_vec(),
        1 => version = [9, 9],
        2 => {
            descr = ["<f2", ">f4", "<c8", "|O", "<U3", "nonsense", "<f4 ", "", "<i16"].choose(rng).unwrap().to_string()
        }
        3 => fortran = ["True", "1", "yes", "None"].choose(rng).unwrap().to_string(),
        4 => {
            shape_field =
                ["(-1,)", "(1, -2)", "(99999999999999999999,)", "(4611686018427387904, 4)", "[3]", "(a,)", "("]
                    .choose(rng)
                    .unwrap()
                    .to_string()
        }
        5 => extra = ", 'extra': 1".into(),
        6 => data_len = data_len.saturating_sub(1 + rng.random_range(0..4)),
        7 => data_len += 1 + rng.random_range(0..8),
        8 => dict_override = Some("{'descr': '<f4', 'fortran_order': False, 'shape': (".to_string()),
        9 => dict_override = Some("not a dict at all".to_string()),
        10 => dict_override = Some("{'descr': '<f4', 'shape': (1,)}".to_string()),
        11 => header_len_delta = [-5i64, 1000, 60000].choose(rng).copied().unwrap_or(0),
        12 => dict_override = Some(format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}")),
        13 => {
            dict_override =
                Some(format!("{{\"descr\": \"{descr}\", \"fortran_order\": False, \"shape\": {shape_text}}}"))
        }
        14 => {
            dict_override = Some(format!(
                "{{'descr': '{descr}', 'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}}}"
            ))
        }
        15 => version = [2, 0],
        16 => shape_field = format!("({},)", count + 1),
        _ => {} // a good file: must be accepted when the shape fits
    }
    let dict = dict_override.unwrap_or_else(|| {
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_field}{extra}, }}")
    });
    let length_bytes = if version[0] >= 2 { 4 } else { 2 };
    let unpadded = magic.len() + 2 + length_bytes + dict.len() + 1;
    let padding = (64 - unpadded % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(padding));
    let mut out = magic;
    out.extend_from_slice(&version);
    let len = (header.len() as i64 + header_len_delta).max(0) as u64;
    if length_bytes == 4 {
        out.extend_from_slice(&(len as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(len as u16).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend((0..data_len).map(|i| (i % 7) as u8));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNTER: &str = include_str!("../../examples/counter.mlir");

    #[test]
    fn cases_are_pure_functions_of_seed_and_number() {
        for case in 0..200 {
            let (mut a, mut b) = (COUNTER.as_bytes().to_vec(), COUNTER.as_bytes().to_vec());
            let name_a = mutate(&mut a, &mut case_rng(5, case));
            let name_b = mutate(&mut b, &mut case_rng(5, case));
            assert_eq!((name_a, &a), (name_b, &b));
        }
    }

    #[test]
    fn every_mutation_changes_something_sometimes() {
        let mut changed = std::collections::BTreeSet::new();
        for case in 0..3000 {
            let mut bytes = COUNTER.as_bytes().to_vec();
            let name = mutate(&mut bytes, &mut case_rng(9, case));
            if bytes != COUNTER.as_bytes() {
                changed.insert(name);
            }
        }
        for name in MUTATIONS {
            assert!(changed.contains(name), "mutation {name} never changed the counter example");
        }
    }

    #[test]
    fn bound_names_and_good_npy_files() {
        assert_eq!(bound_names(COUNTER), vec!["T".to_string()]);
        // Some generated .npy files are good ones: they must decode.
        let good = (0..400)
            .map(|case| bad_npy(&mut case_rng(3, case), &[2, 3], "<f4", 4))
            .filter(|bytes| tempo_runtime::npy::decode(bytes).is_ok())
            .count();
        assert!(good > 0);
    }
}
