//! `dialect!`: declare an MLIR dialect once, in Rust, and get both its IRDL
//! definition and typed Rust builders/accessors.
//!
//! Grammar (doc comments are kept and become Rust docs and the op catalogue):
//!
//! ```text
//! dialect! {
//!     /// Dialect doc.
//!     dialect NAME {
//!         /// Type doc.
//!         type TYPE_NAME;
//!         /// Op doc: the first line is the one-line summary.
//!         op OP_NAME {
//!             operands { NAME: KIND, ... }      // KIND: any | variadic any | TYPE_NAME | variadic TYPE_NAME
//!             attributes { NAME: ATTR_KIND, ... } // string | array | type | affine_map | integer_set | integer | elements | any
//!             results { NAME: KIND, ... }
//!             regions { NAME, ... }             // single-block regions
//!         }
//!     }
//! }
//! ```
//!
//! Every section is optional. One op declaration generates:
//! - its `irdl.operation` (one `irdl.any`/`irdl.base` constraint value per
//!   slot, so slots never constrain each other),
//! - a typed view `FooOp` with `NAME` constant, `try_from`, one accessor per
//!   operand, attribute, result and region,
//! - a `build` function taking every operand, attribute, result type and
//!   region, and an entry in the dialect's `OPS` catalogue.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::{
    Attribute, Ident, Token, braced,
    ext::IdentExt,
    parse::{Parse, ParseStream},
    parse_macro_input,
    punctuated::Punctuated,
};

mod kw {
    syn::custom_keyword!(dialect);
    syn::custom_keyword!(op);
    syn::custom_keyword!(operands);
    syn::custom_keyword!(attributes);
    syn::custom_keyword!(results);
    syn::custom_keyword!(regions);
    syn::custom_keyword!(variadic);
}

struct DialectDecl {
    docs: Vec<String>,
    name: Ident,
    types: Vec<TypeDecl>,
    ops: Vec<OpDecl>,
}

struct TypeDecl {
    docs: Vec<String>,
    name: Ident,
}

struct OpDecl {
    docs: Vec<String>,
    name: Ident,
    operands: Vec<ValueSlot>,
    attributes: Vec<AttrSlot>,
    results: Vec<ValueSlot>,
    regions: Vec<Ident>,
}

struct ValueSlot {
    name: Ident,
    variadic: bool,
    /// `None` for `any`, otherwise a type of this dialect.
    dialect_type: Option<Ident>,
}

struct AttrSlot {
    name: Ident,
    kind: Ident,
}

fn doc_lines(attrs: &[Attribute]) -> syn::Result<Vec<String>> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            return Err(syn::Error::new_spanned(attr, "only doc comments are allowed here"));
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value
        {
            lines.push(s.value().trim().to_string());
        }
    }
    Ok(lines)
}

impl Parse for ValueSlot {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let variadic = input.peek(kw::variadic);
        if variadic {
            input.parse::<kw::variadic>()?;
        }
        let kind: Ident = input.parse()?;
        let dialect_type = if kind == "any" { None } else { Some(kind) };
        Ok(Self { name, variadic, dialect_type })
    }
}

const ATTR_KINDS: &[&str] = &["string", "array", "type", "affine_map", "integer_set", "integer", "elements", "any"];

impl Parse for AttrSlot {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let kind: Ident = input.call(Ident::parse_any)?;
        if !ATTR_KINDS.iter().any(|k| kind == k) {
            return Err(syn::Error::new(
                kind.span(),
                format!("unknown attribute kind; expected one of {ATTR_KINDS:?}"),
            ));
        }
        Ok(Self { name, kind })
    }
}

fn parse_list<T: Parse>(input: ParseStream) -> syn::Result<Vec<T>> {
    let content;
    braced!(content in input);
    Ok(Punctuated::<T, Token![,]>::parse_terminated(&content)?.into_iter().collect())
}

impl Parse for OpDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let docs = doc_lines(&input.call(Attribute::parse_outer)?)?;
        input.parse::<kw::op>()?;
        let name: Ident = input.call(Ident::parse_any)?;
        let body;
        braced!(body in input);
        let mut op = OpDecl { docs, name, operands: vec![], attributes: vec![], results: vec![], regions: vec![] };
        while !body.is_empty() {
            let look = body.lookahead1();
            if look.peek(kw::operands) {
                body.parse::<kw::operands>()?;
                op.operands = parse_list(&body)?;
            } else if look.peek(kw::attributes) {
                body.parse::<kw::attributes>()?;
                op.attributes = parse_list(&body)?;
            } else if look.peek(kw::results) {
                body.parse::<kw::results>()?;
                op.results = parse_list(&body)?;
            } else if look.peek(kw::regions) {
                body.parse::<kw::regions>()?;
                op.regions = parse_list(&body)?;
            } else {
                return Err(look.error());
            }
        }
        Ok(op)
    }
}

impl Parse for DialectDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let docs = doc_lines(&input.call(Attribute::parse_outer)?)?;
        input.parse::<kw::dialect>()?;
        let name: Ident = input.parse()?;
        let body;
        braced!(body in input);
        let mut types = Vec::new();
        let mut ops = Vec::new();
        while !body.is_empty() {
            let fork = body.fork();
            fork.call(Attribute::parse_outer)?;
            if fork.peek(Token![type]) {
                let docs = doc_lines(&body.call(Attribute::parse_outer)?)?;
                body.parse::<Token![type]>()?;
                let name: Ident = body.parse()?;
                body.parse::<Token![;]>()?;
                types.push(TypeDecl { docs, name });
            } else {
                ops.push(body.parse()?);
            }
        }
        Ok(DialectDecl { docs, name, types, ops })
    }
}

fn camel(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect()
}

fn irdl_attr_constraint(kind: &str) -> &'static str {
    match kind {
        "string" => "irdl.base \"#builtin.string\"",
        "array" => "irdl.base \"#builtin.array\"",
        "type" => "irdl.base \"#builtin.type\"",
        "affine_map" => "irdl.base \"#builtin.affine_map\"",
        "integer_set" => "irdl.base \"#builtin.integer_set\"",
        "integer" => "irdl.base \"#builtin.integer\"",
        "elements" => "irdl.base \"#builtin.dense_int_or_fp_elements\"",
        _ => "irdl.any",
    }
}

/// Generates the `irdl.dialect` text for the whole dialect.
fn irdl_text(d: &DialectDecl) -> syn::Result<String> {
    let dialect = d.name.to_string();
    let mut out = format!("irdl.dialect @{dialect} {{\n");
    for t in &d.types {
        out += &format!("  irdl.type @{}\n", t.name);
    }
    for op in &d.ops {
        out += &format!("  irdl.operation @{} {{\n", op.name);
        let mut counter = 0usize;
        let mut value_slots = |slots: &[ValueSlot], section: &str, out: &mut String| -> syn::Result<()> {
            if slots.is_empty() {
                return Ok(());
            }
            let mut entries = Vec::new();
            for slot in slots {
                let var = format!("%v{counter}");
                counter += 1;
                match &slot.dialect_type {
                    None => *out += &format!("    {var} = irdl.any\n"),
                    Some(ty) => {
                        if !d.types.iter().any(|t| t.name == *ty) {
                            return Err(syn::Error::new(
                                ty.span(),
                                "unknown kind: expected `any` or a type of this dialect",
                            ));
                        }
                        *out += &format!("    {var} = irdl.base @{dialect}::@{ty}\n");
                    }
                }
                let v = if slot.variadic { format!("variadic {var}") } else { var };
                entries.push(format!("{}: {v}", slot.name));
            }
            *out += &format!("    irdl.{section}({})\n", entries.join(", "));
            Ok(())
        };
        value_slots(&op.operands, "operands", &mut out)?;
        value_slots(&op.results, "results", &mut out)?;
        if !op.attributes.is_empty() {
            let mut entries = Vec::new();
            for attr in &op.attributes {
                let var = format!("%a{counter}");
                counter += 1;
                out += &format!("    {var} = {}\n", irdl_attr_constraint(&attr.kind.to_string()));
                entries.push(format!("\"{}\" = {var}", attr.name));
            }
            out += &format!("    irdl.attributes {{{}}}\n", entries.join(", "));
        }
        if !op.regions.is_empty() {
            let mut entries = Vec::new();
            for region in &op.regions {
                let var = format!("%r{counter}");
                counter += 1;
                out += &format!("    {var} = irdl.region with size 1\n");
                entries.push(format!("{region}: {var}"));
            }
            out += &format!("    irdl.regions({})\n", entries.join(", "));
        }
        out += "  }\n";
    }
    out += "}\n";
    let variadic_groups = |slots: &[ValueSlot]| slots.iter().filter(|s| s.variadic).count();
    for op in &d.ops {
        if variadic_groups(&op.operands) > 1 || variadic_groups(&op.results) > 1 {
            return Err(syn::Error::new(
                op.name.span(),
                "at most one variadic operand group and one variadic result group per op",
            ));
        }
    }
    Ok(out)
}

/// The operand accessors of `op`'s view: with at most one variadic group,
/// the variadic group spans everything between the fixed operands before
/// and after it.
fn operand_accessors(op: &OpDecl) -> Vec<TokenStream2> {
    let n_fixed_operands = op.operands.iter().filter(|s| !s.variadic).count();
    let mut operand_accessors = Vec::new();
    let mut seen_variadic = false;
    for (i, slot) in op.operands.iter().enumerate() {
        let name = &slot.name;
        let after = op.operands.len() - i - 1;
        if slot.variadic {
            seen_variadic = true;
            let before = i;
            operand_accessors.push(quote! {
                #[doc = concat!("The `", stringify!(#name), "` operand group.")]
                pub fn #name(&self) -> Vec<::melior::ir::Value<'c, 'a>> {
                    let count = ::melior::ir::operation::OperationLike::operand_count(&self.op) - #n_fixed_operands;
                    (#before..#before + count).filter_map(|i| ::melior::ir::operation::OperationLike::operand(&self.op, i).ok()).collect()
                }
            });
        } else if seen_variadic {
            operand_accessors.push(quote! {
                #[doc = concat!("The `", stringify!(#name), "` operand.")]
                pub fn #name(&self) -> ::melior::ir::Value<'c, 'a> {
                    let total = ::melior::ir::operation::OperationLike::operand_count(&self.op);
                    ::melior::ir::operation::OperationLike::operand(&self.op, total - 1 - #after).expect("operand count checked by IRDL")
                }
            });
        } else {
            operand_accessors.push(quote! {
                #[doc = concat!("The `", stringify!(#name), "` operand.")]
                pub fn #name(&self) -> ::melior::ir::Value<'c, 'a> {
                    ::melior::ir::operation::OperationLike::operand(&self.op, #i).expect("operand count checked by IRDL")
                }
            });
        }
    }
    operand_accessors
}

/// The result accessors of `op`'s view (a variadic group as for operands).
fn result_accessors(op: &OpDecl) -> Vec<TokenStream2> {
    let n_fixed_results = op.results.iter().filter(|s| !s.variadic).count();
    let mut result_accessors = Vec::new();
    let mut seen_variadic = false;
    for (i, slot) in op.results.iter().enumerate() {
        let name = &slot.name;
        let after = op.results.len() - i - 1;
        if slot.variadic {
            seen_variadic = true;
            result_accessors.push(quote! {
                #[doc = concat!("The `", stringify!(#name), "` result group.")]
                pub fn #name(&self) -> Vec<::melior::ir::Value<'c, 'a>> {
                    let count = ::melior::ir::operation::OperationLike::result_count(&self.op) - #n_fixed_results;
                    (#i..#i + count).filter_map(|i| ::melior::ir::operation::OperationLike::result(&self.op, i).ok().map(Into::into)).collect()
                }
            });
        } else if seen_variadic {
            result_accessors.push(quote! {
                #[doc = concat!("The `", stringify!(#name), "` result.")]
                pub fn #name(&self) -> ::melior::ir::Value<'c, 'a> {
                    let total = ::melior::ir::operation::OperationLike::result_count(&self.op);
                    ::melior::ir::operation::OperationLike::result(&self.op, total - 1 - #after).expect("result count checked by IRDL").into()
                }
            });
        } else {
            result_accessors.push(quote! {
                #[doc = concat!("The `", stringify!(#name), "` result.")]
                pub fn #name(&self) -> ::melior::ir::Value<'c, 'a> {
                    ::melior::ir::operation::OperationLike::result(&self.op, #i).expect("result count checked by IRDL").into()
                }
            });
        }
    }
    result_accessors
}

/// The parameters of `op`'s builder and the statements that collect them
/// into operands, attributes, result types and regions.
fn builder_parts(op: &OpDecl) -> (Vec<TokenStream2>, Vec<TokenStream2>) {
    let mut params = Vec::new();
    let mut body = Vec::new();
    for slot in &op.operands {
        let name = &slot.name;
        if slot.variadic {
            params.push(quote! { #name: &[::melior::ir::Value<'c, '_>] });
            body.push(quote! { operands.extend_from_slice(#name); });
        } else {
            params.push(quote! { #name: ::melior::ir::Value<'c, '_> });
            body.push(quote! { operands.push(#name); });
        }
    }
    for attr in &op.attributes {
        let name = &attr.name;
        let key = name.to_string();
        params.push(quote! { #name: ::melior::ir::Attribute<'c> });
        body.push(quote! {
            attributes.push((::melior::ir::Identifier::new(context, #key), #name));
        });
    }
    for slot in &op.results {
        let name = format_ident!("{}_type", slot.name);
        if slot.variadic {
            params.push(quote! { #name: &[::melior::ir::Type<'c>] });
            body.push(quote! { result_types.extend_from_slice(#name); });
        } else {
            params.push(quote! { #name: ::melior::ir::Type<'c> });
            body.push(quote! { result_types.push(#name); });
        }
    }
    for region in &op.regions {
        params.push(quote! { #region: ::melior::ir::Region<'c> });
        body.push(quote! { regions.push(#region); });
    }
    (params, body)
}

fn op_code(d: &DialectDecl, op: &OpDecl) -> TokenStream2 {
    let dialect = d.name.to_string();
    let op_name = format!("{dialect}.{}", op.name);
    let struct_name = format_ident!("{}Op", camel(&op.name.to_string()));
    let doc = op.docs.join("\n");

    let operand_accessors = operand_accessors(op);
    let result_accessors = result_accessors(op);
    let attr_accessors = op.attributes.iter().map(|a| {
        let name = &a.name;
        let key = name.to_string();
        quote! {
            #[doc = concat!("The `", #key, "` attribute (checked present by IRDL).")]
            pub fn #name(&self) -> Option<::melior::ir::Attribute<'c>> {
                ::melior::ir::operation::OperationLike::attribute(&self.op, #key).ok()
            }
        }
    });
    let region_accessors = op.regions.iter().enumerate().map(|(i, name)| {
        quote! {
            #[doc = concat!("The `", stringify!(#name), "` region.")]
            pub fn #name(&self) -> ::melior::ir::RegionRef<'c, 'a> {
                ::melior::ir::operation::OperationLike::region(&self.op, #i).expect("region count checked by IRDL")
            }
        }
    });

    let (params, body) = builder_parts(op);

    let code = quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug)]
        pub struct #struct_name<'c, 'a> {
            op: ::melior::ir::OperationRef<'c, 'a>,
        }

        impl<'c, 'a> #struct_name<'c, 'a> {
            /// The full operation name.
            pub const NAME: &'static str = #op_name;

            /// Views `op` as this op, if it is one.
            pub fn try_from(op: ::melior::ir::OperationRef<'c, 'a>) -> Option<Self> {
                use ::melior::ir::operation::OperationLike;
                (op.name().as_string_ref().as_str() == Ok(#op_name)).then_some(Self { op })
            }

            /// The underlying operation.
            pub fn operation(&self) -> ::melior::ir::OperationRef<'c, 'a> {
                self.op
            }

            #(#operand_accessors)*
            #(#attr_accessors)*
            #(#result_accessors)*
            #(#region_accessors)*

            /// Builds the op; attributes are checked against the IRDL
            /// definition when the op is verified.
            #[allow(clippy::too_many_arguments, unused_mut)]
            pub fn build(
                context: &'c ::melior::Context,
                location: ::melior::ir::Location<'c>,
                #(#params),*
            ) -> ::melior::ir::Operation<'c> {
                let mut operands: Vec<::melior::ir::Value<'c, '_>> = Vec::new();
                let mut attributes: Vec<(::melior::ir::Identifier<'c>, ::melior::ir::Attribute<'c>)> = Vec::new();
                let mut result_types: Vec<::melior::ir::Type<'c>> = Vec::new();
                let mut regions: Vec<::melior::ir::Region<'c>> = Vec::new();
                #(#body)*
                ::melior::ir::operation::OperationBuilder::new(#op_name, location)
                    .add_operands(&operands)
                    .add_attributes(&attributes)
                    .add_results(&result_types)
                    .add_regions_vec(regions)
                    .build()
                    .expect("operation builds")
            }
        }
    };
    code
}

/// Declares a dialect; see the crate docs for the grammar.
#[proc_macro]
pub fn dialect(input: TokenStream) -> TokenStream {
    let decl = parse_macro_input!(input as DialectDecl);
    match expand(&decl) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

fn expand(d: &DialectDecl) -> syn::Result<TokenStream2> {
    let irdl = irdl_text(d)?;
    let dialect = d.name.to_string();
    let dialect_doc = d.docs.join("\n");
    let ops = d.ops.iter().map(|op| op_code(d, op));
    let specs = d.ops.iter().map(|op| {
        let op_name = format!("{dialect}.{}", op.name);
        let summary = op.docs.first().cloned().unwrap_or_default();
        let doc = op.docs.join("\n");
        let operand_names: Vec<String> = op.operands.iter().map(|s| s.name.to_string()).collect();
        let attr_names: Vec<String> = op.attributes.iter().map(|s| s.name.to_string()).collect();
        let attr_kinds: Vec<String> = op.attributes.iter().map(|s| s.kind.to_string()).collect();
        let result_names: Vec<String> = op.results.iter().map(|s| s.name.to_string()).collect();
        let region_names: Vec<String> = op.regions.iter().map(|s| s.to_string()).collect();
        quote! {
            OpSpec {
                name: #op_name,
                summary: #summary,
                doc: #doc,
                operands: &[#(#operand_names),*],
                attributes: &[#((#attr_names, #attr_kinds)),*],
                results: &[#(#result_names),*],
                regions: &[#(#region_names),*],
            }
        }
    });
    let type_consts = d.types.iter().map(|t| {
        let const_name = format_ident!("{}_TYPE", t.name.to_string().to_uppercase());
        let text = format!("!{dialect}.{}", t.name);
        let doc = t.docs.join("\n");
        quote! {
            #[doc = #doc]
            pub const #const_name: &str = #text;
        }
    });
    Ok(quote! {
        #[doc = #dialect_doc]
        pub const DIALECT_NAME: &str = #dialect;

        /// The IRDL definition of the dialect, as loaded into MLIR contexts and
        /// printed by `tempo-opt --emit-irdl`.
        pub const IRDL: &str = #irdl;

        /// One entry of the op catalogue.
        #[derive(Clone, Copy, Debug)]
        pub struct OpSpec {
            /// Full op name (`dialect.op`).
            pub name: &'static str,
            /// First line of the doc comment.
            pub summary: &'static str,
            /// The whole doc comment.
            pub doc: &'static str,
            /// Operand names, in order.
            pub operands: &'static [&'static str],
            /// Attribute names and kinds.
            pub attributes: &'static [(&'static str, &'static str)],
            /// Result names, in order.
            pub results: &'static [&'static str],
            /// Region names, in order.
            pub regions: &'static [&'static str],
        }

        /// Every op of the dialect, in declaration order.
        pub const OPS: &[OpSpec] = &[#(#specs),*];

        #(#type_consts)*
        #(#ops)*
    })
}
