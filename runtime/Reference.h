//===- Reference.h - Reference kernels for every attn op ---------*- C++
//-*-===//
//
// Naive loops with double accumulation: the oracle for every generated
// kernel and every rewrite. Shares no code with codegen/. Each function
// validates its operands and returns an error Status (never crashes) when the
// shapes do not fit the op; on success `out` holds the result.
//
// Shape conventions (see shared design.md §2-3):
//  * "leading dims" are every dim but the last two; they broadcast the numpy
//    way (right-aligned, a dim of 1 or a missing dim stretches) wherever an
//    op says "broadcast".
//  * axes are non-negative dim indices.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_REFERENCE_H
#define ATTN_RUNTIME_REFERENCE_H

#include "runtime/Tensor.h"

#include <array>
#include <vector>

namespace attn::runtime {

/// How one normalization step rescales a slice of the score matrix.
enum class NormKind {
  Softmax, ///< exp(x - max) / sum(exp(x - max)); an all-masked slice is 0.
  Sum,     ///< x / (eps + sum(x)).
  Count,   ///< x / (length of the axis).
  None,    ///< unchanged.
};

/// Which slices of the score matrix S (n queries x m keys) a step normalizes.
enum class NormAxis {
  Keys,    ///< each query row: S[i, :] (reduces over the m keys, dim -1).
  Queries, ///< each key column: S[:, j] (reduces over the n queries, dim -2).
};

struct NormStep {
  NormKind kind = NormKind::Softmax;
  NormAxis axis = NormAxis::Keys;
  double eps = 0.0; ///< only used by Sum.
};

/// Elementwise feature map applied to Q and K before the product.
enum class FeatureMap {
  Identity,   ///< x
  EluPlusOne, ///< elu(x) + 1 = x + 1 if x > 0 else exp(x)
  Relu,       ///< max(x, 0)
};

enum class EfficientVariant {
  Softmax, ///< softmax(Q over dk features) (softmax(K over m positions)^T V)
  Scaling, ///< (Q / sqrt(n)) ((K / sqrt(n))^T V), n = number of queries
};

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

/// Batched matrix product of the last two dims: lhs (..., M, K) (or
/// (..., K, M) when transposeLhs), rhs (..., K, N) (or (..., N, K) when
/// transposeRhs) -> (..., M, N). Leading dims broadcast. Both rank >= 2.
Status matmul(const Tensor &lhs, const Tensor &rhs, bool transposeLhs,
              bool transposeRhs, Tensor &out);

/// Normalizes every 1-D slice of `input` along `axis` as `kind` says
/// (eps only for Sum; eps >= 0). Softmax treats -inf as "masked": a slice that
/// is entirely -inf becomes all zeros instead of NaN.
Status normalize(const Tensor &input, NormKind kind, int64_t axis, double eps,
                 Tensor &out);

/// out = factor * input.
Status scale(const Tensor &input, double factor, Tensor &out);

/// out = map(input) elementwise.
Status featureMap(const Tensor &input, FeatureMap map, Tensor &out);

/// Prefix sum along `axis`: out[.., i, ..] = sum_{j <= i} in[.., j, ..]
/// (inclusive), or sum_{j < i} (exclusive: the first entry is 0). With
/// `reverse`, the suffix sum: sum_{j >= i} (inclusive) or sum_{j > i}
/// (exclusive: the last entry is 0), the adjoint of the forward scan.
Status prefixSum(const Tensor &input, int64_t axis, Tensor &out,
                 bool exclusive = false, bool reverse = false);

/// out = exp(input - lse), lse (input's shape with size 1 at `axis`)
/// broadcast along `axis`: a softmax's weights from its slices' log-sum-exp.
Status softmaxFromLse(const Tensor &input, const Tensor &lse, int64_t axis,
                      Tensor &out);

/// out = cotangent * map'(input) elementwise (the adjoint of featureMap):
/// map' is 1 for Identity; 1 if x > 0 else exp(x) for EluPlusOne; 1 if
/// x > 0 else 0 for Relu. input and cotangent have the same shape.
Status featureMapGrad(const Tensor &input, const Tensor &cotangent,
                      FeatureMap map, Tensor &out);

/// numpy broadcast of `input` to `shape`: out[idx] = input[idx'] with idx'
/// the trailing dims of idx (right-aligned) and 0 where input has size 1.
/// `input` must broadcast to `shape` (rank <= its rank, each dim 1 or equal).
Status broadcastLike(const Tensor &input, const std::vector<int64_t> &shape,
                     Tensor &out);

/// The adjoint of broadcasting a tensor of `shape` to input's shape: out has
/// `shape` and sums input over the leading dims `shape` lacks and over every
/// dim where `shape` has size 1. `shape` must broadcast to input's shape.
Status unbroadcast(const Tensor &input, const std::vector<int64_t> &shape,
                   Tensor &out);

/// out = lhs + rhs with numpy broadcasting over all dims (right-aligned).
Status add(const Tensor &lhs, const Tensor &rhs, Tensor &out);

/// out = lhs * rhs elementwise, numpy broadcasting as in add.
Status mul(const Tensor &lhs, const Tensor &rhs, Tensor &out);

/// out = lhs / (rhs + eps) elementwise, numpy broadcasting as in add;
/// eps finite and >= 0.
Status div(const Tensor &lhs, const Tensor &rhs, double eps, Tensor &out);

/// Sum along `axis`, which stays in the result with size 1.
Status reduceSum(const Tensor &input, int64_t axis, Tensor &out);

/// Rank >= 2. In the last two dims (i, j), entries with j > i (key after
/// query) are replaced by `fill` (use -inf before a softmax, 0 otherwise).
Status causalMask(const Tensor &input, double fill, Tensor &out);

/// out = floor(input) elementwise (infinities and NaN unchanged).
Status floor(const Tensor &input, Tensor &out);

/// The block of `input` that starts at `offsets` and takes `sizes[d]`
/// elements `strides[d]` apart along each dim d (tensor.extract_slice with
/// static offsets, sizes and strides; the rank is kept). Every index read
/// must be inside `input`; strides are >= 1.
Status slice(const Tensor &input, const std::vector<int64_t> &offsets,
             const std::vector<int64_t> &sizes,
             const std::vector<int64_t> &strides, Tensor &out);

/// `dest` with `source` written into the block that starts at `offsets` and
/// takes source.shape[d] elements `strides[d]` apart along each dim d
/// (tensor.insert_slice with static offsets, sizes and strides, same rank;
/// the adjoint of `slice`). Every index written must be inside `dest`;
/// strides are >= 1.
Status insertSlice(const Tensor &source, const Tensor &dest,
                   const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &strides, Tensor &out);

/// One level of a multi-scale feature map: rows [start, start + height*width)
/// of the value tensor, stored row-major (h, w).
struct SpatialLevel {
  int64_t height = 0;
  int64_t width = 0;
};

/// Bilinear samples of every level at every point.
///   value     (N, Lv, M, D), Lv = sum of height*width over levels
///   locations (N, Lq, M, L, P, 2), (x, y) normalized to [0, 1]
///   out       (N, Lq, M, L, P, D)
/// Sample pixel: alignCorners ? (x*(W-1), y*(H-1)) : (x*W - 0.5, y*H - 0.5).
/// The four corners around it are weighted bilinearly; each corner outside
/// [0, H) x [0, W) contributes 0 (grid_sample padding "zeros"). A location
/// that is not finite contributes 0 as well.
Status bilinearGather(const Tensor &value, const Tensor &locations,
                      const std::vector<SpatialLevel> &levels,
                      bool alignCorners, Tensor &out);

/// Value vectors at integer pixels of every level.
///   value  (N, Lv, M, D), Lv = sum of height*width over levels
///   pixels (N, Lq, M, L, P, 2), (x, y) pixel coordinates of level l
///   out    (N, Lq, M, L, P, D)
/// out[n, q, h, l, p, :] = value[n, start_l + y*W_l + x, h, :] with (x, y)
/// rounded down to integers; 0 when the pixel is outside [0, W_l) x [0, H_l)
/// or a coordinate is not finite.
Status gatherPixels(const Tensor &value, const Tensor &pixels,
                    const std::vector<SpatialLevel> &levels, Tensor &out);

/// The adjoint of gatherPixels: adds cotangent vectors into the pixels.
///   cotangent (N, Lq, M, L, P, D), pixels (N, Lq, M, L, P, 2)
///   out       (N, Lv, M, D), Lv = sum of height*width over levels
/// out is 0 except out[n, start_l + y*W_l + x, h, :] += cotangent[n, q, h,
/// l, p, :] for every pixel (x, y) (rounded down) inside [0, W_l) x
/// [0, H_l); pixels outside their level or not finite add nothing.
Status scatterPixels(const Tensor &cotangent, const Tensor &pixels,
                     const std::vector<SpatialLevel> &levels, Tensor &out);

//===----------------------------------------------------------------------===//
// High-level attention ops (implemented directly, not through the primitives,
// so the primitives and the decompositions can be checked against them)
//===----------------------------------------------------------------------===//

/// O = rho(S) V with S = scale * phi(Q) phi(K)^T (+ mask).
///   query (..., n, dk), key (..., m, dk), value (..., m, dv),
///   mask (..., n, m) additive, may be null. Leading dims broadcast.
///   out (..., n, dv).
/// With `causal`, key j is visible to query i iff j <= i. Masked-out entries
/// are excluded from every step: they are 0 after each step, a softmax
/// ignores them (an all-masked slice is 0), Sum ignores them; Count divides
/// by the full axis length (m for Keys, n for Queries).
/// Steps apply in order; Keys steps reduce over m, Queries steps over n.
/// With `lse` (steps: one Softmax over Keys besides None ones), also the
/// row log-sum-exp of the scores, (..., n): log sum_j exp(S_ij) over the
/// visible keys (max + log sum exp(S - max)), +inf for a row with none
/// (so exp(S - lse) = 0 there), NaN for a row with a NaN score.
Status dotProductAttention(const Tensor &query, const Tensor &key,
                           const Tensor &value, const Tensor *mask,
                           const std::vector<NormStep> &steps, double scale,
                           FeatureMap map, bool causal, Tensor &out,
                           Tensor *lse = nullptr);

/// The gradients of O = softmax_keys(scale Q K^T) V (keys after their query
/// hidden with `causal`; a row with no visible key has P = 0) given dO:
/// dV = P^T dO, dS = P * (dO V^T - rowsum(dO * O)), dQ = scale dS K,
/// dK = scale dS^T Q. query (..., n, dk), key (..., m, dk), value
/// (..., m, dv), cotangent (..., n, dv); leading dims broadcast and every
/// gradient has the broadcast leading dims (not summed over them). With
/// `lse` (the row log-sum-exp the forward saved, (..., n) over the broadcast
/// leading dims), P = exp(S - lse) on the visible keys instead of a softmax
/// recomputed from S. With `mask` (additive, (..., n, m), leading dims
/// broadcasting with the others), S = scale Q K^T + mask, and a -inf mask
/// entry hides its score as in dotProductAttention; the mask gets no
/// gradient here (it would be dS). With `output` (the forward's result O,
/// the cotangent's shape; only with `lse`), D = rowsum(dO * O) as given.
Status attentionGrad(const Tensor &query, const Tensor &key,
                     const Tensor &value, const Tensor &cotangent, double scale,
                     bool causal, Tensor &dQuery, Tensor &dKey, Tensor &dValue,
                     const Tensor *lse = nullptr, const Tensor *mask = nullptr,
                     const Tensor *output = nullptr);

/// Efficient attention (Shen et al.). query (..., n, dk), key (..., m, dk),
/// value (..., m, dv) -> (..., n, dv). Leading dims broadcast. With
/// `context`, also the normalized context rho_k(K)^T V per problem,
/// (..., dk, dv) with the result's leading dims; with `keyLse` (softmax
/// variant), the log-sum-exp of each key feature over the m positions,
/// (..., 1, dk) (+inf for an all -inf feature, NaN for one with a NaN or
/// +inf).
Status efficientAttention(const Tensor &query, const Tensor &key,
                          const Tensor &value, EfficientVariant variant,
                          Tensor &out, Tensor *context = nullptr,
                          Tensor *keyLse = nullptr);

/// External attention (EANet): A = X Mk^T (n x S); A <- softmax over the n
/// positions (per slot); A <- A / (eps + sum over slots) (per position);
/// O = A Mv. input (..., n, d), memoryKey (..., S, d), memoryValue
/// (..., S, dv) -> (..., n, dv). Leading dims broadcast (memories usually
/// rank 2).
Status externalAttention(const Tensor &input, const Tensor &memoryKey,
                         const Tensor &memoryValue, double eps, Tensor &out);

/// Multi-scale deformable attention (Deformable DETR).
///   value (N, Lv, M, D), locations (N, Lq, M, L, P, 2),
///   weights (N, Lq, M, L, P) -> out (N, Lq, M*D), head-major:
///   out[n, q, h*D + d] = sum_{l,p} weights[n,q,h,l,p] *
///                        sample(value, level l, locations[n,q,h,l,p])[d]
/// with the sampling rule of bilinearGather.
Status deformableAttention(const Tensor &value, const Tensor &locations,
                           const Tensor &weights,
                           const std::vector<SpatialLevel> &levels,
                           bool alignCorners, Tensor &out);

/// The gradients of deformableAttention given the cotangent (N, Lq, M*D)
/// of its result (grid_sample's backward with zeros padding): per sample
/// with weight a, fractions (fx, fy) and corners c inside the level with
/// bilinear weights wx_c wy_c and dot_c = <value row of c, cotangent of
/// (q, h)>: dValue[row of c] += a wx_c wy_c cotangent; dWeights = sum_c
/// wx_c wy_c dot_c; dLocations = a (sx sum_c dwx_c wy_c dot_c, sy sum_c wx_c
/// dwy_c dot_c), dwx = -1 (left) or +1 (right), sx = W (W - 1 with
/// alignCorners), sy = H (H - 1). A location that is not finite or has no
/// corner inside gets 0. Results have the operands' shapes.
Status deformableGrad(const Tensor &value, const Tensor &locations,
                      const Tensor &weights, const Tensor &cotangent,
                      const std::vector<SpatialLevel> &levels,
                      bool alignCorners, Tensor &dValue, Tensor &dLocations,
                      Tensor &dWeights);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_REFERENCE_H
