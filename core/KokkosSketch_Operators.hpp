// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Operators.hpp
/// \brief Every random operator, in one include: each entry (or sparse row pattern) is a pure
/// function of (RNG state, row, column).
///
/// One header per operator: KokkosSketch_DenseOp.hpp (DenseDist, DenseOp),
/// KokkosSketch_SparseOp.hpp (SparseDist, SparseOp), KokkosSketch_CountSketchOp.hpp,
/// KokkosSketch_GaussianSketchOp.hpp and KokkosSketch_HalfGaussianOp.hpp; what they share
/// (Scaling, submatrix extents) is in KokkosSketch_OperatorBase.hpp, and
/// KokkosSketch_OperatorTraits.hpp defines is_sketch_operator. Every operator has one shape:
/// rows(), cols(), row_offset(), col_offset(), submatrix(row0, col0, n_rows, n_cols), state()
/// and next_state().
#ifndef KOKKOSSKETCH_OPERATORS_HPP
#define KOKKOSSKETCH_OPERATORS_HPP

#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_OperatorBase.hpp>
#include <KokkosSketch_OperatorTraits.hpp>
#include <KokkosSketch_SparseOp.hpp>

#endif
