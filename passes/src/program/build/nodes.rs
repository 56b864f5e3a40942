//! Typing the ops of a branch body: each `temporal` op of a `temporal.define`
//! becomes a node of the program model, its operands and result type checked.

use super::*;

impl<'c, 'v> Builder<'c, 'v> {
    pub(super) fn node(
        &mut self,
        op: OperationRef<'c, '_>,
        reader: usize,
        values: &[Value<'c, '_>],
        nodes: &[Node<'c>],
    ) -> Option<Node<'c>> {
        let name = op_name(op);
        let location = op.location();
        let regions_allowed = usize::from(name == t::CallOp::NAME);
        if op.result_count() != 1 || op.region_count() != regions_allowed {
            self.error(op, format!("'{name}' is not allowed in a temporal.define body"));
            return None;
        }
        let result_type: Type = op.result(0).expect("one result").r#type();
        let ty = match PointType::from_type(result_type) {
            Ok(t) => t,
            Err(e) => {
                self.error(op, format!("'{name}': {e}"));
                return None;
            }
        };
        // A call's arguments are the operands of the `gpu.yield` in its region.
        let argument_op = if name == t::CallOp::NAME {
            use melior::ir::RegionLike;
            let region = op.region(0).expect("one region");
            let block = region.first_block();
            use melior::ir::BlockLike;
            let only = block.as_ref().and_then(|b| b.first_operation()).filter(|o| o.next_in_block().is_none());
            match only {
                Some(y) if op_name(y) == "gpu.yield" => Some(y),
                _ => {
                    self.error(
                        op,
                        "the 'args' region of temporal.call must hold exactly one gpu.yield of the arguments".into(),
                    );
                    return None;
                }
            }
        } else {
            None
        };
        let operand_source = argument_op.unwrap_or(op);
        let mut operand_nodes = Vec::new();
        for i in 0..operand_source.operand_count() {
            let v = operand_source.operand(i).expect("in range");
            if name == t::ReadOp::NAME || name == t::ReadRangeOp::NAME {
                break;
            }
            if name == t::ReadAtOp::NAME && i == 0 {
                continue;
            }
            match values.iter().position(|x| x.to_raw().ptr == v.to_raw().ptr) {
                Some(n) => operand_nodes.push(n),
                None => {
                    self.error(
                        op,
                        format!("operand #{i} of '{name}' must be computed earlier in the same temporal.define body"),
                    );
                    return None;
                }
            }
        }
        let kind = match name.as_str() {
            t::ReadOp::NAME => self.read_node(op, reader, &ty)?,
            t::ReadAtOp::NAME => self.read_at_node(op, reader, &ty, &operand_nodes, nodes)?,
            t::ReadRangeOp::NAME => self.read_range_node(op, reader, &ty)?,
            n if ReduceKind::of_op(n).is_some() => self.reduction_node(op, &name, &operand_nodes, nodes, &ty)?,
            t::ConstantOp::NAME => self.constant_node(op, result_type, &ty)?,
            n if UnaryKind::of_op(n).is_some()
                || BinaryKind::of_op(n).is_some()
                || matches!(n, t::CmpOp::NAME | t::SelectOp::NAME | t::CastOp::NAME) =>
            {
                self.elementwise_node(op, &name, &operand_nodes, nodes, &ty)?
            }
            t::MatmulOp::NAME
            | t::EinsumOp::NAME
            | t::AttentionOp::NAME
            | t::FlashAttentionOp::NAME
            | t::FlashAttentionQueryGradOp::NAME
            | t::FlashAttentionKeyGradOp::NAME => self.contraction_node(op, &name, &operand_nodes, nodes, &ty)?,
            t::RankOp::NAME | t::WorldSizeOp::NAME | t::AllReduceOp::NAME => {
                self.collective_node(op, &name, &operand_nodes, nodes, &ty)?
            }
            _ => self.other_node(op, &name, &operand_nodes, nodes, &ty, reader, location)?,
        };
        Some(Node { kind, ty, location })
    }

    /// `temporal.read`: a point of a tensor at an affine index.
    #[allow(clippy::ptr_arg)]
    fn read_node(&mut self, op: OperationRef<'c, '_>, reader: usize, ty: &PointType) -> Option<NodeKind> {
        let source = self.tensor_of(op.operand(0).expect("IRDL checked"), op)?;
        let Some(index) = op.attribute("index").ok().and_then(AffineMap::from_attribute) else {
            self.error(op, "temporal.read needs an affine_map attribute 'index'".into());
            return None;
        };
        if let Err(e) = crate::affine::check_divisions(&index.results) {
            self.error(op, format!("read index: {e}"));
            return None;
        }
        self.check_point_read(op, reader, source, &index, 0, ty)?;
        Some(NodeKind::Read { source, index })
    }

    /// The checks a point read and a read through data share: `index` has
    /// the reader's domain (and `data` more) dims and the bounds as
    /// symbols, gives one coordinate per source dimension, and the op's
    /// type is the source's point type.
    fn check_point_read(
        &mut self,
        op: OperationRef<'c, '_>,
        reader: usize,
        source: usize,
        index: &AffineMap,
        data: usize,
        ty: &PointType,
    ) -> Option<()> {
        let reader_domain = self.program.tensors[reader].domain.len();
        let source_domain = self.program.tensors[source].domain.len();
        let source_name = self.program.tensors[source].name.clone();
        let dims = reader_domain + data;
        if index.num_dims != dims || index.num_symbols != self.program.dims.len() {
            let (what, which) = match data {
                0 => ("a read", "the reader's domain"),
                _ => ("a read through data", "the reader's domain, then one per coordinate operand"),
            };
            self.error(
                op,
                format!(
                    "index of {what} by '{}' must have {dims} dims ({which}) and {} symbols (the bounds), has ({})[{}]",
                    self.program.tensors[reader].name,
                    self.program.dims.len(),
                    index.num_dims,
                    index.num_symbols
                ),
            );
            return None;
        }
        if index.results.len() != source_domain {
            self.error(
                op,
                format!(
                    "read of '{source_name}' must give {source_domain} coordinates (its domain), gives {}",
                    index.results.len()
                ),
            );
            return None;
        }
        if *ty != self.program.tensors[source].point {
            self.error(
                op,
                format!("read of '{source_name}' must produce {}, produces {ty}", self.program.tensors[source].point),
            );
            return None;
        }
        Some(())
    }

    /// `temporal.read_at`: a point of a tensor at coordinates given by
    /// data (scalar integers of the body) and the reader's variables.
    fn read_at_node(
        &mut self,
        op: OperationRef<'c, '_>,
        reader: usize,
        ty: &PointType,
        data: &[usize],
        nodes: &[Node<'c>],
    ) -> Option<NodeKind> {
        let source = self.tensor_of(op.operand(0).expect("IRDL checked"), op)?;
        let Some(index) = op.attribute("index").ok().and_then(AffineMap::from_attribute) else {
            self.error(op, "temporal.read_at needs an affine_map attribute 'index'".into());
            return None;
        };
        if let Err(e) = crate::affine::check_divisions(&index.results) {
            self.error(op, format!("read index: {e}"));
            return None;
        }
        for (k, &n) in data.iter().enumerate() {
            let t = &nodes[n].ty;
            if !t.shape.is_empty() || !matches!(t.element, ElementType::I64 | ElementType::I32) {
                self.error(
                    op,
                    format!("coordinate operand #{k} of temporal.read_at must be a scalar integer (tensor<i64> or tensor<i32>), is {t}"),
                );
                return None;
            }
        }
        // The coordinates are computed before the point they name is
        // needed: not from another read through data, a call or a
        // collective (which would run once more for them).
        let mut needed = vec![false; nodes.len()];
        data.iter().for_each(|&n| needed[n] = true);
        for k in (0..nodes.len()).rev() {
            if needed[k] {
                if matches!(nodes[k].kind, NodeKind::ReadAt { .. } | NodeKind::Call { .. } | NodeKind::AllReduce(..)) {
                    self.error(
                        op,
                        format!(
                            "the coordinates of a read through data come from '{}': they may not come from a read through data, an external call or a collective",
                            nodes[k].kind.op_name()
                        ),
                    );
                    return None;
                }
                crate::rewrite::operands(&nodes[k].kind).into_iter().for_each(|a| needed[a] = true);
            }
        }
        self.check_point_read(op, reader, source, &index, data.len(), ty)?;
        Some(NodeKind::ReadAt { source, index, data: data.to_vec() })
    }

    /// `temporal.read_range`: a box of points of a tensor.
    #[allow(clippy::ptr_arg)]
    fn read_range_node(&mut self, op: OperationRef<'c, '_>, reader: usize, ty: &PointType) -> Option<NodeKind> {
        let source = self.tensor_of(op.operand(0).expect("IRDL checked"), op)?;
        let maps = |key: &str| op.attribute(key).ok().and_then(|a| array_attr(a, AffineMap::from_attribute));
        let (Some(lower), Some(upper), Some(caps)) = (maps("lower"), maps("upper"), maps("caps")) else {
            self.error(op, "temporal.read_range needs 'lower', 'upper' and 'caps': arrays of affine_maps".into());
            return None;
        };
        if let Err(e) = crate::affine::check_divisions(lower.iter().chain(&upper).chain(&caps).flat_map(|m| &m.results))
        {
            self.error(op, format!("range bounds: {e}"));
            return None;
        }
        let src = &self.program.tensors[source];
        let (source_name, source_domain, source_point) = (src.name.clone(), src.domain.len(), src.point.clone());
        let reader_domain = self.program.tensors[reader].domain.len();
        let bounds = self.program.dims.len();
        if lower.len() != source_domain || upper.len() != source_domain {
            self.error(op, format!("read_range of '{source_name}' needs one lower and one upper map per source dimension ({source_domain})"));
            return None;
        }
        if !caps.is_empty() && caps.len() != source_domain {
            self.error(op, format!("read_range of '{source_name}' needs 'caps' empty or with one map per source dimension ({source_domain})"));
            return None;
        }
        if upper.iter().zip(&caps).any(|(u, c)| !u.results.is_empty() && !c.results.is_empty()) {
            self.error(
                op,
                "a read_range cap applies to point dimensions only; a range dimension's cap must have no results"
                    .into(),
            );
            return None;
        }
        if let Some(m) =
            lower.iter().chain(&upper).chain(&caps).find(|m| m.num_dims != reader_domain || m.num_symbols != bounds)
        {
            self.error(op, format!(
                "read_range maps must have {reader_domain} dims (the reader's domain) and {bounds} symbols (the bounds), one has ({})[{}]",
                m.num_dims, m.num_symbols
            ));
            return None;
        }
        if lower.iter().any(|m| m.results.is_empty()) {
            self.error(op, "every lower map of a read_range needs at least one result".into());
            return None;
        }
        let ranges = upper.iter().filter(|m| !m.results.is_empty()).count();
        let mut expected = vec![DYNAMIC; ranges];
        expected.extend(&source_point.shape);
        let expected = PointType { shape: expected, element: source_point.element };
        // A range dimension may state its length statically (the
        // program is then valid for bounds that give that length,
        // which is checked before running).
        let fits = ty.element == expected.element
            && ty.shape.len() == expected.shape.len()
            && ty.shape[..ranges].iter().all(|&n| n == DYNAMIC || n >= 0)
            && ty.shape[ranges..] == expected.shape[ranges..];
        if !fits {
            self.error(op, format!("read_range of '{source_name}' with {ranges} range dimension(s) must produce {expected}, produces {ty}"));
            return None;
        }
        let caps = if caps.is_empty() {
            vec![AffineMap { num_dims: reader_domain, num_symbols: bounds, results: Vec::new() }; source_domain]
        } else {
            caps
        };
        Some(NodeKind::ReadRange { source, lower, upper, caps })
    }

    /// Sums, maxima, means, argmax and cumulative sums along an axis.
    #[allow(clippy::ptr_arg)]
    fn reduction_node(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &String,
        operand_nodes: &Vec<usize>,
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<NodeKind> {
        let a = operand_nodes[0];
        let Some(axis) = op.attribute("axis").ok().and_then(integer_attr) else {
            self.error(op, format!("'{name}' needs an integer attribute 'axis'"));
            return None;
        };
        let input = &nodes[a].ty;
        if axis < 0 || axis as usize >= input.shape.len() {
            self.error(op, format!("'{name}' axis {axis} is out of range for {input}"));
            return None;
        }
        let kind = ReduceKind::of_op(name).unwrap_or(ReduceKind::CumSum);
        let mut shape = input.shape.clone();
        if kind != ReduceKind::CumSum {
            shape.remove(axis as usize);
        }
        let element = if kind == ReduceKind::ArgMax { ElementType::I64 } else { input.element };
        let expected = PointType { shape, element };
        if !ty.compatible(&expected) || input.element == ElementType::I1 {
            self.error(op, format!("'{name}' of {input} along axis {axis} gives {expected}, not {ty}"));
            return None;
        }
        if kind == ReduceKind::Mean && !input.element.is_float() {
            self.error(op, format!("'{name}' needs floating-point values, got {input}"));
            return None;
        }
        Some(NodeKind::Reduce(kind, a, axis as usize))
    }

    /// `temporal.constant`: dense elements of the result type.
    #[allow(clippy::ptr_arg)]
    fn constant_node(&mut self, op: OperationRef<'c, '_>, result_type: Type<'c>, ty: &PointType) -> Option<NodeKind> {
        let Ok(value) = op.attribute("value") else {
            self.error(op, "temporal.constant needs a 'value' attribute".into());
            return None;
        };
        let same_type = unsafe {
            mlirAttributeIsADenseElements(value.to_raw())
                && mlirTypeEqual(mlirAttributeGetType(value.to_raw()), result_type.to_raw())
        };
        if !same_type {
            self.error(op, format!("constant value must be dense elements of the result type {ty}"));
            return None;
        }
        let values = dense_values(value, ty.num_elements(), ty.element);
        let integers = dense_integers(value, ty.num_elements(), ty.element);
        Some(NodeKind::Constant { text: value.to_string().into(), values: values.into(), integers: integers.into() })
    }

    /// Unary, binary, comparison, select and cast ops (NumPy broadcasting).
    #[allow(clippy::ptr_arg)]
    fn elementwise_node(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &String,
        operand_nodes: &Vec<usize>,
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<NodeKind> {
        let unary = UnaryKind::of_op(name);
        let binary = BinaryKind::of_op(name);
        Some(if let Some(u) = unary {
            let a = operand_nodes[0];
            if !nodes[a].ty.compatible(&ty) {
                self.error(op, format!("'{name}' operand is {} but the result is {ty}", nodes[a].ty));
                return None;
            }
            if let Some(kind) = u.operand_needs(ty.element) {
                self.error(op, format!("'{name}' needs {kind} operand, got {ty}"));
                return None;
            }
            NodeKind::Unary(u, a)
        } else if let Some(b) = binary {
            let (l, r) = (operand_nodes[0], operand_nodes[1]);
            let (a, c) = (&nodes[l].ty, &nodes[r].ty);
            let shape = PointType::broadcast_shape(&[&a.shape, &c.shape]);
            let fits = a.element == ty.element
                && c.element == ty.element
                && shape.is_some_and(|shape| PointType { shape, element: ty.element }.compatible(&ty));
            if !fits {
                self.error(
                    op,
                    format!(
                        "'{name}' needs operands and result of one type, got {} and {} -> {ty}",
                        nodes[l].ty, nodes[r].ty
                    ),
                );
                return None;
            }
            let boolean = ty.element == ElementType::I1;
            let wrong = match b {
                BinaryKind::And | BinaryKind::Or => (!boolean).then_some("boolean (i1)"),
                BinaryKind::Pow => (!ty.element.is_float()).then_some("floating-point"),
                _ => boolean.then_some("numeric"),
            };
            if let Some(kind) = wrong {
                self.error(op, format!("'{name}' needs {kind} operands, got {ty}"));
                return None;
            }
            NodeKind::Binary(b, l, r)
        } else if name == t::CmpOp::NAME {
            let (l, r) = (operand_nodes[0], operand_nodes[1]);
            let Some(predicate) =
                op.attribute("predicate").ok().and_then(string_attr).and_then(|t| Predicate::parse(&t))
            else {
                self.error(
                    op,
                    "temporal.cmp needs a 'predicate': one of \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\"".into(),
                );
                return None;
            };
            let (a, c) = (&nodes[l].ty, &nodes[r].ty);
            let shape = PointType::broadcast_shape(&[&a.shape, &c.shape]);
            let operands_fit = a.element == c.element && shape.is_some();
            let expected = PointType { shape: shape.unwrap_or_default(), element: ElementType::I1 };
            if !operands_fit || !ty.compatible(&expected) || a.element == ElementType::I1 {
                self.error(
                    op,
                    format!("'temporal.cmp' compares numbers of one type into booleans; got {a} and {c} -> {ty}"),
                );
                return None;
            }
            NodeKind::Compare(predicate, l, r)
        } else if name == t::SelectOp::NAME {
            let (c, a, b) = (operand_nodes[0], operand_nodes[1], operand_nodes[2]);
            let condition = &nodes[c].ty;
            let shape = PointType::broadcast_shape(&[&condition.shape, &nodes[a].ty.shape, &nodes[b].ty.shape]);
            let fits = condition.element == ElementType::I1
                && nodes[a].ty.element == ty.element
                && nodes[b].ty.element == ty.element
                && shape.is_some_and(|shape| PointType { shape, element: ty.element }.compatible(&ty));
            if !fits {
                self.error(op, format!(
                    "'temporal.select' needs a boolean condition and values of the result type {ty}, got {condition}, {} and {}",
                    nodes[a].ty, nodes[b].ty
                ));
                return None;
            }
            NodeKind::Select(c, a, b)
        } else if name == t::CastOp::NAME {
            let a = operand_nodes[0];
            if nodes[a].ty.shape.len() != ty.shape.len()
                || !(PointType { shape: nodes[a].ty.shape.clone(), element: ty.element }).compatible(&ty)
            {
                self.error(op, format!("'temporal.cast' keeps the shape: {} cannot become {ty}", nodes[a].ty));
                return None;
            }
            NodeKind::Cast(a)
        } else {
            self.error(op, format!("'{name}' is not allowed in a temporal.define body"));
            return None;
        })
    }

    /// `temporal.flash_attention` and its backward halves ([`Flash`]).
    #[allow(clippy::ptr_arg)]
    fn flash_node(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &String,
        part: FlashPart,
        operand_nodes: &Vec<usize>,
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<NodeKind> {
        let text = |key: &str| op.attribute(key).ok().and_then(string_attr).unwrap_or_default();
        let Some(band) = Band::parse(&text("band")) else {
            self.error(
                op,
                format!(
                    "'{name}': band must be 'lower:upper' (integers, each side may be empty), got '{}'",
                    text("band")
                ),
            );
            return None;
        };
        let flash = Flash { part, band };
        let shapes: Vec<&[i64]> = operand_nodes.iter().map(|&a| nodes[a].ty.shape.as_slice()).collect();
        let element = ty.element;
        let same_element = operand_nodes.iter().all(|&a| nodes[a].ty.element == element);
        let checked = flash.sizes(&shapes).and_then(|sizes| {
            let shape = flash.result_shape(&sizes);
            if !same_element || !element.is_float() {
                Err("float operands and result of one type".to_string())
            } else if sizes.groups == DYNAMIC || sizes.rows == DYNAMIC || sizes.dk == DYNAMIC || sizes.dv == DYNAMIC {
                Err("only the positions (the leading axes) may have dynamic sizes".to_string())
            } else if !ty.compatible(&PointType { shape: shape.clone(), element }) {
                Err(format!("the result must be {}", PointType { shape, element }))
            } else {
                Ok(())
            }
        });
        if let Err(e) = checked {
            self.error(op, format!("'{name}': {e}"));
            return None;
        }
        Some(NodeKind::FlashAttention(flash, operand_nodes.clone()))
    }

    /// Matrix products, einsums and tiled attention.
    #[allow(clippy::ptr_arg)]
    fn contraction_node(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &String,
        operand_nodes: &Vec<usize>,
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<NodeKind> {
        Some(if name == t::MatmulOp::NAME {
            let (l, r) = (operand_nodes[0], operand_nodes[1]);
            let (a, b) = (&nodes[l].ty, &nodes[r].ty);
            let expected = matmul_shape(&a.shape, &b.shape);
            let ok = a.element == b.element
                && expected.is_some_and(|shape| ty.compatible(&PointType { shape, element: a.element }));
            if !ok || ty.element == ElementType::I1 {
                self.error(op, format!("'temporal.matmul' cannot multiply {a} by {b} into {ty}"));
                return None;
            }
            NodeKind::Matmul(l, r)
        } else if name == t::EinsumOp::NAME {
            let spec = op.attribute("spec").ok().and_then(string_attr).unwrap_or_default();
            let einsum = match Einsum::parse(&spec) {
                Ok(e) => e,
                Err(e) => {
                    self.error(op, e);
                    return None;
                }
            };
            if operand_nodes.len() > 2 {
                self.error(op, format!("'temporal.einsum' takes one or two operands, got {}", operand_nodes.len()));
                return None;
            }
            let shapes: Vec<&[i64]> = operand_nodes.iter().map(|&a| nodes[a].ty.shape.as_slice()).collect();
            let sizes = match einsum.label_sizes(&shapes) {
                Ok(sizes) => sizes,
                Err(e) => {
                    self.error(op, e);
                    return None;
                }
            };
            let shape: Vec<i64> = sizes[..einsum.result.len()].iter().map(|&(_, n)| n).collect();
            let same_element = operand_nodes.iter().all(|&a| nodes[a].ty.element == ty.element);
            if !same_element
                || ty.element == ElementType::I1
                || !ty.compatible(&PointType { shape, element: ty.element })
            {
                let operands: Vec<String> = operand_nodes.iter().map(|&a| nodes[a].ty.to_string()).collect();
                self.error(op, format!("'temporal.einsum' '{einsum}' of {} cannot give {ty}", operands.join(", ")));
                return None;
            }
            NodeKind::Einsum(einsum, operand_nodes.clone())
        } else if let Some(part) = FlashPart::of_op(name) {
            self.flash_node(op, name, part, operand_nodes, nodes, ty)?
        } else if name == t::AttentionOp::NAME {
            let text = |key: &str| op.attribute(key).ok().and_then(string_attr).unwrap_or_default();
            let parsed = Einsum::parse(&text("score")).and_then(|score| {
                let combine = Einsum::parse(&text("combine"))?;
                let block = op.attribute("block").ok().and_then(integer_attr).unwrap_or(0);
                Attention::new(score, combine, block)
            });
            let attention = match parsed {
                Ok(a) => a,
                Err(e) => {
                    self.error(op, e);
                    return None;
                }
            };
            let &[q, k, v, scale] = operand_nodes.as_slice() else {
                self.error(
                    op,
                    format!(
                        "'temporal.attention' takes query, key, value and scale, got {} operands",
                        operand_nodes.len()
                    ),
                );
                return None;
            };
            let shape_of = |a: usize| nodes[a].ty.shape.clone();
            let checked = attention.score.label_sizes(&[&shape_of(q), &shape_of(k)]).and_then(|sizes| {
                let scores: Vec<i64> = sizes[..attention.score.result.len()].iter().map(|&(_, n)| n).collect();
                attention.combine.label_sizes(&[&scores, &shape_of(v)])
            });
            let sizes = match checked {
                Ok(sizes) => sizes,
                Err(e) => {
                    self.error(op, format!("'temporal.attention': {e}"));
                    return None;
                }
            };
            // Only the attended label may be dynamic (compiled code
            // keeps a row's buffers static).
            let n = attention.label();
            let labelled = [
                (&attention.score.operands[0], q),
                (&attention.score.operands[1], k),
                (&attention.combine.operands[1], v),
            ];
            if let Some(c) = labelled.iter().find_map(|(labels, node)| {
                labels.iter().zip(&nodes[*node].ty.shape).find(|(c, d)| **c != n && **d == DYNAMIC).map(|(c, _)| *c)
            }) {
                self.error(
                    op,
                    format!("'temporal.attention': label '{c}' has a dynamic size; only the attended label '{n}' may"),
                );
                return None;
            }
            let shape: Vec<i64> = sizes[..attention.combine.result.len()].iter().map(|&(_, n)| n).collect();
            let element = ty.element;
            let same_element = [q, k, v, scale].iter().all(|&a| nodes[a].ty.element == element);
            let scalar = nodes[scale].ty.shape.iter().all(|&d| d == 1);
            if !same_element || !element.is_float() || !scalar || !ty.compatible(&PointType { shape, element }) {
                let operands: Vec<String> = [q, k, v, scale].iter().map(|&a| nodes[a].ty.to_string()).collect();
                self.error(
                    op,
                    format!(
                        "'temporal.attention' of {} cannot give {ty} (float operands of one type, a scalar scale)",
                        operands.join(", ")
                    ),
                );
                return None;
            }
            NodeKind::Attention(attention, [q, k, v, scale])
        } else {
            self.error(op, format!("'{name}' is not allowed in a temporal.define body"));
            return None;
        })
    }

    /// Movements, external calls, random values, gathers and dynamic slices.
    #[allow(clippy::ptr_arg)]
    fn other_node(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &String,
        operand_nodes: &Vec<usize>,
        nodes: &[Node<'c>],
        ty: &PointType,
        reader: usize,
        location: Location<'c>,
    ) -> Option<NodeKind> {
        Some(if let Some(movement) = self.movement(op, &name, &operand_nodes, nodes, &ty) {
            NodeKind::Move(movement?, operand_nodes.clone())
        } else if name == t::CallOp::NAME {
            let Some(callee) = op.attribute("callee").ok().and_then(string_attr) else {
                self.error(op, "temporal.call needs a string 'callee'".into());
                return None;
            };
            if let Err(e) = check_name(&callee) {
                self.error(op, format!("callee {e}"));
                return None;
            }
            if let Some(&a) = operand_nodes.iter().find(|&&a| !nodes[a].ty.is_static()) {
                self.error(
                    op,
                    format!("arguments of external call '{callee}' must have static shapes, got {}", nodes[a].ty),
                );
                return None;
            }
            if !ty.is_static() {
                self.error(op, format!("external call '{callee}' must return a static shape, got {ty}"));
                return None;
            }
            let site = self.program.call_sites.len();
            self.program.call_sites.push(CallSite {
                callee: callee.clone(),
                args: operand_nodes.iter().map(|&a| nodes[a].ty.clone()).collect(),
                result: ty.clone(),
                tensor: reader,
                location,
            });
            let batched = op.attribute("batched").is_ok();
            NodeKind::Call { callee, site, args: operand_nodes.clone(), batched }
        } else if name == t::RandomOp::NAME {
            let seed = op.attribute("seed").ok().and_then(integer_attr);
            let distribution = op.attribute("distribution").ok().and_then(string_attr);
            let normal = match distribution.as_deref() {
                Some("uniform") => false,
                Some("normal") => true,
                _ => {
                    self.error(op, "temporal.random needs 'distribution' \"uniform\" or \"normal\"".into());
                    return None;
                }
            };
            let Some(seed) = seed else {
                self.error(op, "temporal.random needs an integer 'seed'".into());
                return None;
            };
            if !ty.element.is_float() || !ty.is_static() {
                self.error(op, format!("temporal.random produces static floating-point values, not {ty}"));
                return None;
            }
            NodeKind::Random { seed, normal }
        } else if name == t::PositionOp::NAME || name == t::BoundOp::NAME {
            let dim_name = op.attribute("dim").ok().and_then(string_attr);
            let Some(dim) = dim_name.as_ref().and_then(|d| self.program.dims.iter().position(|x| &x.name == d)) else {
                self.error(op, format!("'{name}' needs 'dim', the name of a dimension of the program"));
                return None;
            };
            if !ty.shape.is_empty() {
                self.error(op, format!("'{name}' gives a scalar, not {ty}"));
                return None;
            }
            if name == t::BoundOp::NAME {
                NodeKind::Bound(dim)
            } else if self.program.tensors[reader].domain.contains(&dim) {
                NodeKind::Position(dim)
            } else {
                let reader_name = &self.program.tensors[reader].name;
                self.error(
                    op,
                    format!(
                        "position along '{}' in a definition of '{reader_name}', whose domain does not have it",
                        self.program.dims[dim].name
                    ),
                );
                return None;
            }
        } else if name == t::GatherOp::NAME {
            let (table, indices) = (operand_nodes[0], operand_nodes[1]);
            let (t, i) = (&nodes[table].ty, &nodes[indices].ty);
            let integer_indices = matches!(i.element, ElementType::I32 | ElementType::I64);
            let expected = (!t.shape.is_empty()).then(|| {
                let mut shape = i.shape.clone();
                shape.extend(&t.shape[1..]);
                PointType { shape, element: t.element }
            });
            if !integer_indices || !expected.is_some_and(|e| ty.compatible(&e)) {
                self.error(
                    op,
                    format!("'temporal.gather' takes rows of {t} at integer indices {i}; it cannot give {ty}"),
                );
                return None;
            }
            NodeKind::Gather(table, indices)
        } else if name == t::DynamicSliceOp::NAME {
            let a = operand_nodes[0];
            let input = nodes[a].ty.clone();
            let Some(offsets) = op.attribute("offsets").ok().and_then(AffineMap::from_attribute) else {
                self.error(op, "temporal.dynamic_slice needs an affine_map attribute 'offsets'".into());
                return None;
            };
            if let Err(e) = crate::affine::check_divisions(&offsets.results) {
                self.error(op, format!("slice offsets: {e}"));
                return None;
            }
            let reader_domain = self.program.tensors[reader].domain.len();
            if offsets.num_dims != reader_domain
                || offsets.num_symbols != self.program.dims.len()
                || offsets.results.len() != input.shape.len()
            {
                self.error(
                    op,
                    format!(
                        "slice offsets must map the reader's {reader_domain} domain variables and {} bounds to {} offsets (one per dimension of {input})",
                        self.program.dims.len(),
                        input.shape.len()
                    ),
                );
                return None;
            }
            let fits = input.is_static()
                && ty.is_static()
                && ty.element == input.element
                && ty.shape.len() == input.shape.len()
                && ty.shape.iter().zip(&input.shape).all(|(&n, &m)| n <= m);
            if !fits {
                self.error(op, format!("'temporal.dynamic_slice' takes a static box of {ty} out of a static {input}"));
                return None;
            }
            NodeKind::DynamicSlice(a, offsets)
        } else {
            self.error(op, format!("'{name}' is not allowed in a temporal.define body"));
            return None;
        })
    }
}

impl<'c, 'v> Builder<'c, 'v> {
    /// Checks a movement op; `None` if `name` is not one, `Some(None)` after
    /// reporting an error.
    fn movement(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &str,
        operands: &[usize],
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<Option<Movement>> {
        let integer = |key: &str| op.attribute(key).ok().and_then(integer_attr);
        let integers = |key: &str| op.attribute(key).ok().and_then(|a| array_attr(a, integer_attr));
        let input = operands.first().map(|&a| nodes[a].ty.clone());
        let same_element = input.as_ref().is_none_or(|i| i.element == ty.element);
        let result: Result<Movement, String> = match name {
            t::PermuteOp::NAME => {
                let input = input.clone()?;
                match integers("permutation") {
                    Some(p)
                        if p.len() == input.shape.len() && {
                            let mut sorted = p.clone();
                            sorted.sort();
                            sorted.iter().enumerate().all(|(i, &v)| v == i as i64)
                        } =>
                    {
                        let shape: Vec<i64> = p.iter().map(|&k| input.shape[k as usize]).collect();
                        if ty.compatible(&PointType { shape, element: input.element }) {
                            Ok(Movement::Permute(p.iter().map(|&k| k as usize).collect()))
                        } else {
                            Err(format!("permuting {input} gives another shape than {ty}"))
                        }
                    }
                    _ => Err(format!(
                        "'permutation' must be a permutation of 0..{} (array of integers)",
                        input.shape.len()
                    )),
                }
            }
            t::FlipOp::NAME => {
                let input = input.clone()?;
                match integer("axis") {
                    Some(a) if a >= 0 && (a as usize) < input.shape.len() && ty.compatible(&input) => {
                        Ok(Movement::Flip(a as usize))
                    }
                    _ => Err(format!("flip needs an 'axis' of {input} and the same result type, got {ty}")),
                }
            }
            t::SliceOp::NAME => {
                let input = input.clone()?;
                match integers("offsets") {
                    Some(o)
                        if o.len() == input.shape.len()
                            && input.is_static()
                            && ty.is_static()
                            && ty.shape.len() == o.len()
                            && o.iter()
                                .zip(&ty.shape)
                                .zip(&input.shape)
                                .all(|((&o, &n), &m)| o >= 0 && o.checked_add(n).is_some_and(|end| end <= m)) =>
                    {
                        Ok(Movement::Slice(o))
                    }
                    _ => Err(format!("slice needs static shapes and 'offsets' with the box of {ty} inside {input}")),
                }
            }
            t::ReshapeOp::NAME => {
                let input = input.clone()?;
                if reshape_fits(&input.shape, &ty.shape) {
                    Ok(Movement::Reshape)
                } else {
                    Err(format!(
                        "reshape keeps the elements: static shapes with as many elements, or one dynamic dimension in each with the same static sizes around it; not {input} to {ty}"
                    ))
                }
            }
            t::ExpandOp::NAME => {
                let input = input.clone()?;
                if expand_fits(&input.shape, &ty.shape) {
                    Ok(Movement::Expand)
                } else {
                    Err(format!(
                        "{input} does not broadcast to {ty} (a dynamic dimension stays itself; size 1 stretches to a static size)"
                    ))
                }
            }
            t::ConcatOp::NAME => {
                let (a, b) = (nodes[operands[0]].ty.clone(), nodes[operands[1]].ty.clone());
                match integer("axis") {
                    Some(axis) if axis >= 0 && (axis as usize) < a.shape.len() && a.shape.len() == b.shape.len() => {
                        let axis = axis as usize;
                        let mut shape = a.shape.clone();
                        shape[axis] = if a.shape[axis] == DYNAMIC || b.shape[axis] == DYNAMIC {
                            DYNAMIC
                        } else {
                            a.shape[axis] + b.shape[axis]
                        };
                        let others_equal = (0..a.shape.len()).all(|k| k == axis || a.shape[k] == b.shape[k]);
                        if others_equal
                            && a.element == b.element
                            && ty.compatible(&PointType { shape, element: a.element })
                        {
                            Ok(Movement::Concat(axis))
                        } else {
                            Err(format!("cannot concatenate {a} and {b} along {axis} into {ty}"))
                        }
                    }
                    _ => Err(format!("concat needs an 'axis' valid for {a} and {b} of one rank")),
                }
            }
            t::ArangeOp::NAME => {
                if ty.shape.len() == 1 && ty.is_static() && ty.element != ElementType::I1 {
                    Ok(Movement::Arange)
                } else {
                    Err(format!("arange produces a static vector of numbers, not {ty}"))
                }
            }
            _ => return None,
        };
        match result {
            Ok(m) if same_element => Some(Some(m)),
            Ok(_) => {
                self.error(op, format!("'{name}' keeps the element type; got {} -> {ty}", input.expect("operand")));
                Some(None)
            }
            Err(message) => {
                self.error(op, format!("'{name}': {message}"));
                Some(None)
            }
        }
    }
}
