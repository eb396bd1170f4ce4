//===- AlgorithmSampling.cpp - Bilinear and pixel gathers -----------------===//
//
// Sampling of multi-level value maps: attn.bilinear_gather and
// attn.gather_pixels (per sample, from --attn-lower-deformable), the fused
// attn.deformable, attn.scatter_pixels (the adjoint of gather_pixels, from
// --attn-grad) and attn.deformable_grad (the fused backward of
// attn.deformable, from --attn-grad). Levels are static: per-level sizes
// are select chains on the level index.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

using namespace mlir;
using namespace mlir::attn::codegen::detail;

namespace {

/// The cell of a bilinear sample at normalized (x, y) of a level of
/// height x width pixels: the fractions (fx, fy) of its pixel, the corner
/// (x0, y0) it rounds down to (ints), and whether any corner can be inside
/// (the location is finite and the pixel in [-1, width) x [-1, height)).
struct BilinearCell {
  Expr fx, fy, x0, y0, inside;
};

BilinearCell bilinearCell(Halide::Type type, Expr height, Expr width, Expr x,
                          Expr y, bool alignCorners) {
  Expr w = Halide::cast(type, width), hgt = Halide::cast(type, height);
  Expr one = constant(type, 1.0), half = constant(type, 0.5);
  // Strict: the pixel's floor decides the cell, and a contracted (fused)
  // x * w - 1/2 rounds differently from the reference's two steps, which
  // moves a location on a cell boundary into the other cell (the one-sided
  // location gradient there flips).
  Expr px = Halide::strict_float(alignCorners ? x * (w - one) : x * w - half);
  Expr py =
      Halide::strict_float(alignCorners ? y * (hgt - one) : y * hgt - half);
  // Non-finite locations and pixels far outside the level contribute 0;
  // clamping before the int conversion keeps it defined.
  Expr inside = Halide::is_finite(x) && Halide::is_finite(y) && px >= -one &&
                px < w && py >= -one && py < hgt;
  Expr safeX = Halide::select(inside, px, constant(type, -1.0));
  Expr safeY = Halide::select(inside, py, constant(type, -1.0));
  Expr fx0 = Halide::floor(safeX), fy0 = Halide::floor(safeY);
  return {safeX - fx0, safeY - fy0, Halide::cast<int>(fx0),
          Halide::cast<int>(fy0), inside};
}

} // namespace

KernelBuilder::BilinearCorner
KernelBuilder::bilinearCorner(const TensorFunc &value, Expr start, Expr height,
                              Expr width, Expr x, Expr y, bool alignCorners,
                              Expr cx, Expr cy) {
  Halide::Type type = value.type;
  Expr one = constant(type, 1.0), zero = constant(type, 0.0);
  auto [fx, fy, x0, y0, inside] =
      bilinearCell(type, height, width, x, y, alignCorners);
  Expr xc = x0 + cx, yc = y0 + cy;
  Expr valid = inside && xc >= 0 && xc < width && yc >= 0 && yc < height;
  Expr weightX = Halide::select(cx == 0, one - fx, fx);
  Expr weightY = Halide::select(cy == 0, one - fy, fy);
  // Clamped so bounds inference sees [0, Lv); invalid corners weigh 0.
  Expr row = Halide::clamp(start + yc * width + xc, 0, value.shape[1] - 1);
  return {row, Halide::select(valid, weightX * weightY, zero), valid};
}

Expr KernelBuilder::bilinearSample(const TensorFunc &value, Expr n, Expr h,
                                   Expr d, Expr start, Expr height, Expr width,
                                   Expr x, Expr y, bool alignCorners) {
  Halide::Type type = value.type;
  Expr total = constant(type, 0.0);
  for (int cy = 0; cy < 2; ++cy)
    for (int cx = 0; cx < 2; ++cx) {
      BilinearCorner corner = bilinearCorner(value, start, height, width, x, y,
                                             alignCorners, cx, cy);
      // A select, not a product with the 0 weight: an invalid corner adds
      // exactly 0 whatever the clamped row holds (a valid one with weight 0
      // adds 0 times its value, NaN for NaN, as the reference).
      total += Halide::select(corner.valid,
                              corner.weight * value({n, corner.row, h, d}),
                              constant(type, 0.0));
    }
  return total;
}

/// Level sizes and first rows from the `levels [HxW, ...]` attribute;
/// returns the rows of all levels (the value's rows dim).
static int levelTables(ArrayRef<int64_t> flat, std::vector<int> &heights,
                       std::vector<int> &widths, std::vector<int> &starts) {
  int start = 0;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    heights.push_back(static_cast<int>(flat[i]));
    widths.push_back(static_cast<int>(flat[i + 1]));
    starts.push_back(start);
    start += static_cast<int>(flat[i] * flat[i + 1]);
  }
  return start;
}

static LogicalResult checkLevels(Operation *op, ArrayRef<int64_t> flat) {
  int64_t total = 0;
  for (int64_t size : flat)
    if (size < 0 || size > (1 << 20))
      return op->emitError("codegen: level sizes must be in [0, 2^20]");
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    total += flat[i] * flat[i + 1];
  if (total > std::numeric_limits<int32_t>::max())
    return op->emitError("codegen: the levels hold more than 2^31 - 1 rows");
  return success();
}

FailureOr<KernelBuilder::SampleLevels> KernelBuilder::sampleLevels(
    Operation *op, ArrayRef<int64_t> flatLevels, const TensorFunc &value,
    const TensorFunc &samples, const std::string &name, Var l) {
  if (failed(checkLevels(op, flatLevels)))
    return failure();
  std::vector<int> heights, widths, starts;
  int rows = levelTables(flatLevels, heights, widths, starts);
  requireEqual(value.shape[0], samples.shape[0], name + " batch dim");
  // The value's rows are the levels' pixels (the reads clamp to its rows,
  // so another count would give other values, not a fault).
  requireEqual(value.shape[1], Expr(rows), name + " value rows");
  requireEqual(value.shape[2], samples.shape[2], name + " head dim");
  // A dynamic levels dim must be the level list's length (past it, the
  // select chains below would read the last level's sizes).
  requireEqual(samples.shape[3], Expr(static_cast<int>(heights.size())),
               name + " levels of locations");
  std::vector<Expr> computed = {samples.shape[0], samples.shape[1],
                                samples.shape[2], samples.shape[3],
                                samples.shape[4], value.shape[3]};
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op->getResult(0).getType()), computed);
  if (failed(shape))
    return failure();
  SampleLevels result{*shape, heights.back(), widths.back(), starts.back()};
  for (size_t i = heights.size() - 1; i-- > 0;) {
    Expr isLevel = l == static_cast<int>(i);
    result.height = Halide::select(isLevel, heights[i], result.height);
    result.width = Halide::select(isLevel, widths[i], result.width);
    result.start = Halide::select(isLevel, starts[i], result.start);
  }
  return result;
}

LogicalResult KernelBuilder::lowerBilinearGather(Operation *operation) {
  auto op = cast<BilinearGatherOp>(operation);
  const TensorFunc &value = get(op.getValue());
  const TensorFunc &loc = get(op.getLocations());
  std::string name = opFuncName(op);
  Var n("n"), q("q"), h("h"), l("l"), p("p"), d("d");
  FailureOr<SampleLevels> levels =
      sampleLevels(op, op.getSpatialShapes(), value, loc, name, l);
  if (failed(levels))
    return failure();
  auto [shape, height, width, start] = *levels;
  Expr x = loc({n, q, h, l, p, 0}), y = loc({n, q, h, l, p, 1});
  Func result(name);
  define(result, {n, q, h, l, p, d},
         bilinearSample(value, n, h, d, start, height, width, x, y,
                        op.getAlignCorners()));
  bind(op, Family::Gather, {result, shape, value.type});
  return success();
}

// out[n, q, h, l, p, d] = value[n, start_l + y W_l + x, h, d] for the pixel
// (x, y) = floor(pixels[n, q, h, l, p, :]) inside level l, else 0. Levels are
// static: per-level sizes are select chains on l.
LogicalResult KernelBuilder::lowerGatherPixels(Operation *operation) {
  auto op = cast<GatherPixelsOp>(operation);
  const TensorFunc &value = get(op.getValue());
  const TensorFunc &pixels = get(op.getPixels());
  std::string name = opFuncName(op);
  Var n("n"), q("q"), h("h"), l("l"), p("p"), d("d");
  FailureOr<SampleLevels> levels =
      sampleLevels(op, op.getSpatialShapes(), value, pixels, name, l);
  if (failed(levels))
    return failure();
  auto [shape, height, width, start] = *levels;
  Halide::Type type = value.type;
  Expr x = Halide::floor(pixels({n, q, h, l, p, 0}));
  Expr y = Halide::floor(pixels({n, q, h, l, p, 1}));
  // Compared as floats before the int conversion, which keeps it defined;
  // is_finite is exempt from fast-math.
  Expr inside = Halide::is_finite(x) && Halide::is_finite(y) &&
                x >= constant(type, 0.0) && x < Halide::cast(type, width) &&
                y >= constant(type, 0.0) && y < Halide::cast(type, height);
  Expr xi = Halide::cast<int>(Halide::select(inside, x, constant(type, 0.0)));
  Expr yi = Halide::cast<int>(Halide::select(inside, y, constant(type, 0.0)));
  // Clamped so bounds inference sees [0, Lv); outside pixels read row 0.
  Expr row = Halide::clamp(start + yi * width + xi, 0, value.shape[1] - 1);
  Func result(name);
  define(result, {n, q, h, l, p, d},
         Halide::select(inside, value({n, row, h, d}), constant(type, 0.0)));
  bind(op, Family::Gather, {result, shape, type});
  return success();
}

// out[n, q, h*D + d] = sum over levels l, points p and the 4 bilinear
// corners k of cw[n, q, h, l, p, k] * value[n, row[n, q, h, l, p, k], h, d].
// <name>_corners(k, p, l, h, q, n) is a Tuple (row, cw): the corner's value
// row and its weight (attention weight x bilinear weight); a corner outside
// the level has row -1, and the sum skips it (a branch per corner, not a
// select per channel), so neither a NaN or inf in the row it would read nor
// an infinite attention weight times its 0 reaches the output. It depends
// on everything but d, so the schedule computes it once per (query, head)
// and the sum over l, p, k is one scalar weight times a contiguous vector
// of D channels per corner. Per-level sizes are select chains on l (levels
// are static).
LogicalResult KernelBuilder::lowerDeformable(Operation *operation) {
  auto op = cast<DeformableAttentionOp>(operation);
  if (failed(checkLevels(op, op.getSpatialShapes())))
    return failure();
  const TensorFunc &value = get(op.getValue());
  const TensorFunc &loc = get(op.getSamplingLocations());
  const TensorFunc &weights = get(op.getAttentionWeights());
  std::string name = opFuncName(op);
  std::vector<int> heights, widths, starts;
  int rows = levelTables(op.getSpatialShapes(), heights, widths, starts);
  requireEqual(value.shape[0], loc.shape[0], name + " batch dim");
  requireEqual(value.shape[1], Expr(rows), name + " value rows");
  requireEqual(value.shape[2], loc.shape[2], name + " head dim");
  // A dynamic levels dim must be the level list's length (the sum runs over
  // the list's levels).
  requireEqual(loc.shape[3], Expr(static_cast<int>(heights.size())),
               name + " levels of locations");
  for (size_t d = 0; d < 5; ++d)
    requireEqual(weights.shape[d], loc.shape[d],
                 name + " attention_weights dim " + std::to_string(d));
  Expr depth = value.shape[3];
  std::vector<Expr> computed = {
      loc.shape[0], loc.shape[1],
      Halide::Internal::simplify(loc.shape[2] * depth)};
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op.getType()), computed);
  if (failed(shape))
    return failure();
  Var n("n"), q("q"), h("h"), l("l"), p("p"), k("k"), d("d"), c("c");
  Halide::Type type = value.type;
  Expr height = heights.back(), width = widths.back(), start = starts.back();
  for (size_t i = heights.size() - 1; i-- > 0;) {
    height = Halide::select(l == static_cast<int>(i), heights[i], height);
    width = Halide::select(l == static_cast<int>(i), widths[i], width);
    start = Halide::select(l == static_cast<int>(i), starts[i], start);
  }
  Expr x = loc({n, q, h, l, p, 0}), y = loc({n, q, h, l, p, 1});
  BilinearCorner corner = bilinearCorner(value, start, height, width, x, y,
                                         op.getAlignCorners(), k % 2, k / 2);
  Func corners(name + "_corners");
  corners(k, p, l, h, q, n) = Halide::Tuple(
      Halide::select(corner.valid, corner.row, -1),
      Halide::select(corner.valid, weights({n, q, h, l, p}) * corner.weight,
                     constant(type, 0.0)));

  // k innermost: the 4 corners of a sample, then points, then levels.
  RDom r(0, 4, 0, loc.shape[4], 0, static_cast<int>(heights.size()),
         name + "_r");
  Expr row = corners(r.x, r.y, r.z, h, q, n)[0];
  Expr cw = corners(r.x, r.y, r.z, h, q, n)[1];
  r.where(row >= 0);
  Func heads(name + "_heads"), result(name);
  define(heads, {n, q, h, d}, constant(type, 0.0));
  update(heads, {n, q, h, d},
         call(heads, {n, q, h, d}) +
             cw * value({n, Halide::max(row, 0), h, d}));
  define(result, {n, q, c}, call(heads, {n, q, c / depth, c % depth}));
  bind(op, Family::Gather, {result, *shape, type},
       {{"heads", heads}, {"corners", corners}}, {{"heads", r}},
       {{"depth", Halide::Internal::as_const_int(depth)
                      ? *Halide::Internal::as_const_int(depth)
                      : 0}});
  return success();
}

// The adjoint of gather_pixels: out (N, Lv, M, D) is 0, then one update
// over the samples (p innermost, then l, then q) adds cotangent[n, q, h, l,
// p, :] at row start_l + y W_l + x of every pixel (x, y) = floor(pixels[n,
// q, h, l, p, :]) inside level l. n, h and d stay pure in the update, so
// the schedule may run them in parallel and vectorize d: two samples that
// hit the same row differ only in the RDom, which runs in order. The row
// is clamped into [0, Lv) so bounds inference sees the output's extent;
// a pixel outside its level adds 0 there.
LogicalResult KernelBuilder::lowerScatterPixels(Operation *operation) {
  auto op = cast<ScatterPixelsOp>(operation);
  if (failed(checkLevels(op, op.getSpatialShapes())))
    return failure();
  const TensorFunc &cotangent = get(op.getCotangent());
  const TensorFunc &pixels = get(op.getPixels());
  std::string name = opFuncName(op);
  std::vector<int> heights, widths, starts;
  int rows = levelTables(op.getSpatialShapes(), heights, widths, starts);
  int numLevels = static_cast<int>(heights.size());
  for (size_t d = 0; d < 5; ++d)
    requireEqual(pixels.shape[d], cotangent.shape[d],
                 name + " pixels dim " + std::to_string(d));
  requireEqual(pixels.shape[3], Expr(numLevels), name + " levels of pixels");
  requireEqual(pixels.shape[5], Expr(2), name + " (x, y) dim of pixels");
  std::vector<Expr> computed = {cotangent.shape[0], Expr(rows),
                                cotangent.shape[2], cotangent.shape[5]};
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op.getType()), computed);
  if (failed(shape))
    return failure();
  RDom r(0, cotangent.shape[4], 0, numLevels, 0, cotangent.shape[1],
         name + "_r");
  Expr p = r.x, l = r.y, q = r.z;
  Expr height = heights.back(), width = widths.back(), start = starts.back();
  for (int i = numLevels - 1; i-- > 0;) {
    height = Halide::select(l == i, heights[i], height);
    width = Halide::select(l == i, widths[i], width);
    start = Halide::select(l == i, starts[i], start);
  }
  Var n("n"), row("row"), h("h"), d("d");
  Halide::Type type = cotangent.type;
  Expr zero = constant(type, 0.0);
  Expr x = Halide::floor(pixels({n, q, h, l, p, 0}));
  Expr y = Halide::floor(pixels({n, q, h, l, p, 1}));
  // As in lowerGatherPixels: compared as floats before the int conversion.
  Expr inside = Halide::is_finite(x) && Halide::is_finite(y) && x >= zero &&
                x < Halide::cast(type, width) && y >= zero &&
                y < Halide::cast(type, height);
  Expr xi = Halide::cast<int>(Halide::select(inside, x, zero));
  Expr yi = Halide::cast<int>(Halide::select(inside, y, zero));
  Expr at = Halide::clamp(start + yi * width + xi, 0, rows - 1);
  Func result(name);
  define(result, {n, row, h, d}, zero);
  update(result, {n, at, h, d},
         call(result, {n, at, h, d}) +
             Halide::select(inside, cotangent({n, q, h, l, p, d}), zero));
  bind(op, Family::Gather, {result, *shape, type}, {}, {{"scatter", r}});
  return success();
}

// attn.deformable_grad (design §7) as two loop nests that share the corner
// rule of the forward:
//
// <name>_cells(k, p, l, h, q, n) is a Tuple per corner k = cx + 2 cy of a
// sample: its value row (-1 for a corner outside the level), its bilinear
// weight wx wy, and the coefficients of the location gradient sx dwx wy
// and sy wx dwy (dwx = -1 or +1 for the left or right corner, sx = W or
// W - 1 with align_corners). <name>_dots(k, p, l, h, q, n) = <value row of
// k, cotangent of (q, h)> (an update over the D channels), and
// <name>_grads(x, p, l, h, q, n) = sum over the corners inside of
// coefficient x times the dot: x = 0, 1 the location gradient (x, y),
// times the attention weight a once (as the reference: an infinite a
// gives an infinity, not inf - inf), x = 2 the weight gradient. The
// results dlocations and dweights are slices of it.
//
// The value gradient <name>_dvalue(n, row, h, d) is 0, then one update over
// the corners inside (k innermost, then p, l, q) adds a wx wy cotangent[n,
// q, h*D + d] at the corner's row, reading the same rule from
// <name>_scatter_cells
// (a Func of its own, so each loop nest computes the corners where it needs
// them). n, h and d stay pure in the update: different (batch, head) pairs
// own disjoint value rows, and two corners that hit the same row differ
// only in the RDom, which runs in order.
LogicalResult KernelBuilder::lowerDeformableGrad(Operation *operation) {
  auto op = cast<DeformableGradOp>(operation);
  if (failed(checkLevels(op, op.getSpatialShapes())))
    return failure();
  const TensorFunc &value = get(op.getValue());
  const TensorFunc &loc = get(op.getSamplingLocations());
  const TensorFunc &weights = get(op.getAttentionWeights());
  const TensorFunc &cotangent = get(op.getCotangent());
  std::string name = opFuncName(op);
  std::vector<int> heights, widths, starts;
  int rows = levelTables(op.getSpatialShapes(), heights, widths, starts);
  int numLevels = static_cast<int>(heights.size());
  Expr depth = value.shape[3];
  requireEqual(value.shape[0], loc.shape[0], name + " batch dim");
  requireEqual(value.shape[1], Expr(rows), name + " value rows");
  requireEqual(value.shape[2], loc.shape[2], name + " head dim");
  requireEqual(loc.shape[3], Expr(numLevels), name + " levels of locations");
  requireEqual(loc.shape[5], Expr(2), name + " (x, y) dim of locations");
  for (size_t d = 0; d < 5; ++d)
    requireEqual(weights.shape[d], loc.shape[d],
                 name + " attention_weights dim " + std::to_string(d));
  requireEqual(cotangent.shape[0], loc.shape[0], name + " cotangent batch");
  requireEqual(cotangent.shape[1], loc.shape[1], name + " cotangent queries");
  requireEqual(cotangent.shape[2],
               Halide::Internal::simplify(loc.shape[2] * depth),
               name + " cotangent channels");
  Halide::Type type = value.type;
  Expr zero = constant(type, 0.0), one = constant(type, 1.0);
  bool alignCorners = op.getAlignCorners();
  Var n("n"), q("q"), h("h"), l("l"), p("p"), k("k"), d("d"), x("x"),
      row("row");

  // The corner rule of sample (n, q, h, l, p), corner k: the row (-1
  // outside the level), and the weights of the value and weight gradients
  // (wx wy) and of the location gradient (without a).
  struct Corner {
    Expr row, weight, dx, dy;
  };
  auto cornerOf = [&](Expr k, Expr p, Expr l, Expr h, Expr q,
                      Expr n) -> Corner {
    Expr height = heights.back(), width = widths.back(), start = starts.back();
    for (int i = numLevels - 1; i-- > 0;) {
      height = Halide::select(l == i, heights[i], height);
      width = Halide::select(l == i, widths[i], width);
      start = Halide::select(l == i, starts[i], start);
    }
    Expr px = loc({n, q, h, l, p, 0}), py = loc({n, q, h, l, p, 1});
    auto [fx, fy, x0, y0, inside] =
        bilinearCell(type, height, width, px, py, alignCorners);
    Expr cx = k % 2, cy = k / 2;
    Expr xc = x0 + cx, yc = y0 + cy;
    Expr valid = inside && xc >= 0 && xc < width && yc >= 0 && yc < height;
    Expr wx = Halide::select(cx == 0, one - fx, fx);
    Expr wy = Halide::select(cy == 0, one - fy, fy);
    Expr signX = Halide::select(cx == 0, -one, one);
    Expr signY = Halide::select(cy == 0, -one, one);
    Expr scaleX = Halide::cast(type, alignCorners ? width - 1 : width);
    Expr scaleY = Halide::cast(type, alignCorners ? height - 1 : height);
    Expr at = Halide::clamp(start + yc * width + xc, 0, rows - 1);
    return {Halide::select(valid, at, -1), wx * wy, scaleX * signX * wy,
            scaleY * wx * signY};
  };

  // The location and weight gradients.
  Func cells(name + "_cells"), dots(name + "_dots"), grads(name + "_grads");
  Corner corner = cornerOf(k, p, l, h, q, n);
  cells(k, p, l, h, q, n) =
      Halide::Tuple(corner.row, corner.weight, corner.dx, corner.dy);
  RDom rd(0, depth, name + "_rd");
  dots(k, p, l, h, q, n) = zero;
  dots(k, p, l, h, q, n) +=
      value({n, Halide::max(cells(k, p, l, h, q, n)[0], 0), h, rd}) *
      cotangent({n, q, h * depth + rd});
  Expr total = zero, anyInside = Halide::Internal::const_false();
  for (int c = 0; c < 4; ++c) {
    Halide::FuncRef at = cells(c, p, l, h, q, n);
    anyInside = anyInside || at[0] >= 0;
    Expr coefficient = Halide::select(x == 0, at[2], x == 1, at[3], at[1]);
    // A select, not a product with 0: a corner outside the level adds
    // exactly 0 whatever its clamped row holds.
    total +=
        Halide::select(at[0] >= 0, coefficient * dots(c, p, l, h, q, n), zero);
  }
  // A sample with no corner inside has no gradient, whatever its a.
  grads(x, p, l, h, q, n) = Halide::select(
      x < 2 && anyInside, weights({n, q, h, l, p}) * total, total);
  std::vector<Expr> gradsShape = {loc.shape[0], loc.shape[1], loc.shape[2],
                                  loc.shape[3], loc.shape[4], Expr(3)};
  auto staticDepth = Halide::Internal::as_const_int(depth);
  auto staticPoints = Halide::Internal::as_const_int(loc.shape[4]);
  std::map<std::string, int64_t> info = {
      {"depth", staticDepth ? *staticDepth : 0},
      {"points", staticPoints ? *staticPoints : 0},
      {"levels", numLevels}};
  algorithm.ops.push_back({Family::DeformableGradSamples, grads.name(),
                           TensorFunc{grads, gradsShape, type},
                           {{"cells", cells}, {"dots", dots}},
                           {{"dots", rd}}, info});
  algorithm.ops.back().loc = op.getLoc();
  algorithm.ops.back().form =
      "deformable backward, sample pass (per (query, head): the corners' "
      "dots with the cotangent over D, then the location and weight "
      "gradients)";

  auto result = [&](Value v, Func f,
                    std::vector<Expr> computed) -> FailureOr<TensorFunc> {
    FailureOr<std::vector<Expr>> shape =
        extents(op, cast<RankedTensorType>(v.getType()), computed);
    if (failed(shape))
      return failure();
    TensorFunc tensor{f, *shape, type};
    values[v] = tensor;
    return tensor;
  };
  Func dLocations(name + "_dlocations"), dWeights(name + "_dweights");
  dLocations(x, p, l, h, q, n) = grads(x, p, l, h, q, n);
  dWeights(p, l, h, q, n) = grads(2, p, l, h, q, n);
  std::vector<Expr> locShape = loc.shape;
  locShape[5] = Expr(2);
  FailureOr<TensorFunc> dLoc =
      result(op.getDsamplingLocations(), dLocations, locShape);
  FailureOr<TensorFunc> dW = result(
      op.getDattentionWeights(), dWeights,
      std::vector<Expr>(loc.shape.begin(), loc.shape.begin() + 5));
  if (failed(dLoc) || failed(dW))
    return failure();
  algorithm.ops.push_back(
      {Family::DeformableGradSlice, dLocations.name(), *dLoc, {}, {}, {}});
  algorithm.ops.push_back(
      {Family::DeformableGradSlice, dWeights.name(), *dW, {}, {}, {}});

  // The value gradient.
  Func scatterCells(name + "_scatter_cells"), dValue(name + "_dvalue");
  Corner again = cornerOf(k, p, l, h, q, n);
  scatterCells(k, p, l, h, q, n) =
      Halide::Tuple(again.row, again.weight * weights({n, q, h, l, p}));
  RDom rs(0, 4, 0, loc.shape[4], 0, numLevels, 0, loc.shape[1],
          name + "_rs");
  dValue(d, h, row, n) = zero;
  Halide::FuncRef sample = scatterCells(rs.x, rs.y, rs.z, h, rs.w, n);
  Expr at = sample[0], weight = sample[1];
  dValue(d, h, Halide::max(at, 0), n) += Halide::select(
      at >= 0, weight * cotangent({n, rs.w, h * depth + d}), zero);
  FailureOr<TensorFunc> dV =
      result(op.getDvalue(), dValue,
             {loc.shape[0], Expr(rows), loc.shape[2], depth});
  if (failed(dV))
    return failure();
  algorithm.ops.push_back({Family::DeformableGradValue, dValue.name(), *dV,
                           {{"cells", scatterCells}},
                           {{"scatter", rs}}, info});
  algorithm.ops.back().loc = op.getLoc();
  algorithm.ops.back().form =
      "deformable backward, value pass (each sample's cotangent times its "
      "corners' weights scattered into the value rows)";
  return success();
}
