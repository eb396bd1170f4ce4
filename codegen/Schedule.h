//===- Schedule.h - Hand-written CPU schedules (internal) ---------*- C++
//-*-===//
//
// The schedule half of code generation. Each op family has its own file and
// parameter struct (ScheduleParams.h); scheduleKernel dispatches on
// OpStages::family. Schedules only reorder, tile, vectorize, parallelize
// and place the Funcs the algorithm defined: they never change values.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_SCHEDULE_H
#define ATTN_CODEGEN_SCHEDULE_H

#include "codegen/Algorithm.h"
#include "codegen/ScheduleParams.h"
#include "codegen/ShapeThresholds.h"

#include <optional>
#include <set>

namespace mlir::attn::codegen {

/// The chunk tasks of a chunked product (scheduleChunkedProduct).
struct ChunkedProduct {
  Halide::Func tiles;
  Halide::Var u;
  Halide::Func operandReader; ///< the Func that reads the operands
};

/// Row blocks of a tiled output that another loop nest shares
/// (compute_with matches the loops by name): exactly `rows` rows per task,
/// the task loop named like `loop`.
struct FixedRowBlocks {
  int rows;
  Halide::Var loop;
};

struct ScheduleContext {
  Halide::Target target;
  ScheduleParams params;
  std::set<std::string> outputs; ///< names of the pipeline's output Funcs
  /// Names of the op results left inline so far (elementwise ops that are
  /// not outputs); ops are scheduled producers first.
  std::set<std::string> inlined;
  /// Products computed in the output tiles of their epilogue, a pointwise
  /// output (Algorithm.cpp, markEpilogue): epilogue Func name -> product.
  std::map<std::string, OpStages *> epilogues;
  /// Products of one column (a value per row of the epilogue) that an
  /// epilogue computes per row block in its tasks: epilogue name -> product.
  std::map<std::string, OpStages *> rowProducts;
  /// Sums over the last dim that an epilogue's register tiles compute from
  /// the tile's values of its product (the softmax backward's
  /// rowsum(G R)): epilogue name -> sum op.
  std::map<std::string, OpStages *> rowSums;
  /// Names of those products, which get no schedule of their own.
  std::set<std::string> fusedProducts;
  /// Sums over positions that a chunked product reduces in its own chunk
  /// tasks (Algorithm.cpp, markSharedColumnSums): product name -> sum op.
  std::map<std::string, OpStages *> columnSums;
  /// Names of the sums it did reduce, and of the row sums of epilogues
  /// (rowSums), which get no schedule of their own.
  std::set<std::string> fusedSums;
  /// Returned roundings to bf16/f16 that their producer's schedule tiles as
  /// its own output (Algorithm.cpp, markRounding); no schedule of their own.
  std::set<std::string> fusedRoundings;
  /// Products that share the row-block tasks of an epilogue reading the
  /// same rows (Algorithm.cpp, markRowCompanions): epilogue name ->
  /// product. chunkCompanions reduce a chunk of positions per task (the
  /// epilogue's blocks are their chunks, its task loop has the chunk loop's
  /// name); rowCompanions are returned products tiled in the same blocks.
  std::map<std::string, const OpStages *> chunkCompanions;
  std::map<std::string, const OpStages *> rowCompanions;
  /// The blocks of the tiled outputs of those pairs: Func name -> blocks.
  std::map<std::string, FixedRowBlocks> fixedBlocks;
  /// The chunk tasks chunkCompanions got (scheduleGemm), fused with their
  /// epilogue's blocks after every op is scheduled: epilogue name -> tasks.
  std::map<std::string, ChunkedProduct> companionTasks;
  /// The fused loop where a chunk companion's per-task operands go: the
  /// epilogue's (the group's first), as Halide requires of producers
  /// computed at a compute_with loop. Product name -> loop.
  std::map<std::string, Halide::LoopLevel> companionTaskLoops;
  /// Normalizations that only such a pair reads, computed per task where
  /// both read them: normalization name -> the epilogue's task loop.
  std::map<std::string, Halide::LoopLevel> sharedRows;

  bool isOutput(const Halide::Func &f) const {
    return outputs.count(f.name()) != 0;
  }
  /// `requested`, or the target's natural vector width for `type` when 0.
  int vectorWidth(int requested, Halide::Type type) const;
};

/// A split factor and tail strategy for a loop of `extent` that wants
/// `factor`: static extents shrink the factor to fit (ShiftInwards stays in
/// bounds), dynamic extents guard the tail.
struct SplitChoice {
  int factor;
  Halide::TailStrategy tail;
  bool isStatic;
};
SplitChoice chooseSplit(const Halide::Expr &extent, int factor);

/// Largest power-of-two fraction of `width` that divides `extent` (1 if
/// none), so vector loops over a constant region need no tail.
int dividingWidth(int extent, int width);

/// The update of a register tile that reduces in pairs of bf16 values
/// (vdpbf16ps): the pair `inPair` innermost, reduced in each 32-lane
/// product (a VectorReduce that x86 codegen makes vdpbf16ps), the tile's
/// columns in vectors of `width`, columns and rows unrolled, `pairs`
/// outermost.
void tilePairProducts(Halide::Stage update, Halide::RVar inPair,
                      Halide::RVar pairs, Halide::Var cols, Halide::Var rows,
                      int width);

/// A pair-packed stage (2, columns, pairs, ...) of bf16 products (V as
/// valuePairs; attn.efficient's kexp and normalized context), computed a
/// row of the pair at a time in vectors of `vector` columns (dense loads
/// of its source rows), the pair unrolled: Halide combines the two strided
/// stores into one interleaving store. (Vectorizing the pair too gathered
/// the source one element at a time, a vpinsrw per element.)
void vectorizePairs(Halide::Func pairs, int vector);

/// Register-tiled product: `out`(x, y, ...) reads `acc`(x, y, ...), an
/// update over `k` (a 2-D `k` is (value in pair, pair) of bf16 pairs,
/// tilePairProducts). Blocks of blockRows rows run in parallel (fused with the
/// remaining outer dims); `acc` lives in registers, tileRows x
/// tileVectors*vector wide. `out` must already be placed (root or output).
/// Returns the parallel loop over row blocks (TiledProduct::task), where
/// per-block inputs of the product can be computed. With `rhsPanel` (a
/// wrapper of the rhs, Func::in), the column tiles of a block go outside
/// its row tiles and the rhs columns of a tile (k x tile width) are
/// copied into `rhsPanel` once per column tile and block, contiguous:
/// every row tile of the block then reads them from L2 (a rhs whose row
/// stride is a multiple of 4 KiB maps a column panel onto a few cache
/// sets, so the panel was read from L3 once per row tile).
struct TiledProduct {
  /// The parallel loop over row blocks (a Var of `out`).
  Halide::Var task;
  /// Static sizes: the loop of `out` where `acc` is computed, one register
  /// tile of tileRows rows per iteration, its update over `k` outermost
  /// (the loop a per-row reduction over `k` can share, compute_with).
  /// Dynamic sizes: undefined (acc is computed one row at a time).
  std::optional<Halide::LoopLevel> registerTile;
};
/// Rows per parallel task of a tiled product with `cols` columns of `type`
/// (at least `blockRows`; more for a narrow output, GemmParams::taskBytes,
/// while 16 tasks remain), and the same for a product's result `out`
/// (static sizes; else gemm.blockRows).
int taskRows(int64_t rows, int64_t cols, Halide::Type type, int blockRows,
             const ScheduleContext &ctx);
int taskRows(const TensorFunc &out, const ScheduleContext &ctx);

/// `fixedBlocks`: blocks of exactly that many rows (no taskBytes
/// widening), their loop named like the given Var
/// (ScheduleContext::fixedBlocks).
TiledProduct
scheduleTiledProduct(Halide::Func out, Halide::Func acc, const Halide::RDom &k,
                     const Halide::Expr &cols, const Halide::Expr &rows,
                     int vector, int tileVectors, int tileRows, int blockRows,
                     const ScheduleContext &ctx,
                     Halide::Func rhsPanel = Halide::Func(),
                     std::optional<FixedRowBlocks> fixedBlocks = std::nullopt);

/// The parallel chunk loop scheduleChunkedProduct gives `product`.
Halide::Var chunkLoop(const Halide::Func &product);

/// A small product (rows x cols, e.g. dk x dv) reduced over many positions
/// `rj` (K^T V): chunks of ChunkedProductParams::chunk positions reduce in
/// parallel (rfactor) into partials, each in register tiles of
/// ChunkedProductParams::tileRows rows x cols over blocks of positionBlock
/// positions. `product` is (col, row, b...)
/// with an update over `rj`; `streamed` is the operand whose rows the
/// register tiles read (V), prefetched a block ahead when it is an input
/// buffer (ChunkedProductParams::prefetchBlocks), and copied per block into
/// a contiguous panel where its rows would collide in L1
/// (columnPanelConflictsInL1) and `streamedByRows` (its innermost dim is
/// the columns, not the positions as for a transposed rhs). Returns the
/// per-chunk wrapper and its parallel chunk Var, where per-chunk inputs can be
/// computed, and the Func that now calls the operands (the register tile);
/// an undefined `tiles`
/// when the sizes are dynamic or there are fewer than two chunks (nothing
/// is scheduled then).
ChunkedProduct scheduleChunkedProduct(
    Halide::Func product, const Halide::RDom &rj, const Halide::Expr &cols,
    const Halide::Expr &rows, int vector, const ScheduleContext &ctx,
    const Halide::Func &streamed, bool streamedByRows = true);

/// Fuses `partial`, the chunk partials of a position reduction
/// (schedulePositionReduction: (inner, b..., chunk), computed per chunk in
/// its root wrapper), into the chunk tasks of `tiles` (parallel over `u`,
/// over the same chunks): the wrapper's chunk loop joins the tasks'
/// (compute_with), and the accumulators are unrolled into registers when
/// `inner` (extent `innerExtent`) is static and at most 8 vectors.
void fuseChunkPartial(Halide::Func partial, const Halide::Expr &innerExtent,
                      Halide::Func tiles, Halide::Var u, int vector);

/// A reduction `f` over positions `r` (its only update): computed at root,
/// split into chunks reduced in parallel with rfactor when the extent is
/// large enough, vectorized over the pure var `inner` (dim 0 of f). Each
/// chunk task accumulates into a buffer of its own, copied out by the
/// intermediate's root wrapper (`partial.in()`, parallel over the chunks).
/// Returns the rfactor intermediate, or an undefined Func without a split.
/// `chunk` positions per chunk; 0: ReductionParams::chunk.
Halide::Func schedulePositionReduction(Halide::Func f, const Halide::RDom &r,
                                       const ScheduleContext &ctx,
                                       int chunk = 0);

/// A per-row sum `stat`(i, b...) reduced over `r` (the row's entries),
/// computed at `out`'s loop `at`. When the extent is a static multiple of
/// `vector`, the entries split by `vector` and the row loop runs inside that
/// split, so rows reduce as independent instruction streams instead of one
/// serial dependency chain each: the lanes rfactor into a vector-wide
/// partial sum (one vector add per `vector` entries), then one horizontal
/// add per row. (Attention's maxima take two stages in the algorithm
/// instead, see scheduleRowMax: an rfactor's intermediate starts at -inf,
/// which the no-infs fast-math flags make undefined. attn.normalize's max
/// does use this, its -inf entries mapped to the lowest finite value
/// first; test/Codegen/non-finite-*.test hold it to the reference.)
/// With `oneRowAt` (`at` is a loop over single rows), a row of a few
/// vectors keeps them in registers; a row that reducesAsOneVector is one
/// vector reduction.
void scheduleRowStatistic(Halide::Func stat, const Halide::RDom &r,
                          Halide::Func out, Halide::Var at, int vector,
                          bool oneRowAt = false);

/// Whether a reduction over `extent` entries is best one vector of that
/// many lanes (`atomic().vectorize()` of the whole reduction): a power of
/// two of at most kMaxRegisterAccumulators vectors. Its vectors add in
/// registers, then its lanes by halves (addLaneReductionLoweringFix).
bool reducesAsOneVector(int64_t extent, int vector);

/// A row maximum in the algorithm's two stages (defineLaneMax), both at
/// `at`. The lane maxima lanes(lane, i, b...) have the rows of the block as
/// their inner loop, so each key group updates independent per-row vectors
/// (no dependency chain per row); then `max` takes one horizontal max per
/// row over `lanesR`, the lanes domain.
void scheduleRowMax(Halide::Func lanes, Halide::Func max,
                    const Halide::RDom &lanesR, const Halide::LoopLevel &at,
                    int vector);

/// A transposed copy copy(j, d, b...) of rows (K as keyT: keys innermost)
/// at root, in blocks of keys, parallel over the outermost dim. Rows of
/// `rowLength` elements (0: dynamic) a multiple of kKeyRowPeriodBytes long
/// are padded by kKeyRowPaddingBytes against L1 set conflicts.
void scheduleTransposedCopy(Halide::Func copy, int vector, int64_t rowLength);

/// Fuses `start` with the pure vars of `f` from index `first` on (the
/// outer dims, which must be the loops just outside `start`) and
/// parallelizes the fused loop, which it returns.
Halide::Var parallelOuter(Halide::Func f, Halide::Var start, size_t first);

/// Rows (of `elementsPerRow` elements each) per parallel task of about
/// kElementwiseTaskElements elements, 1 to 1024.
int rowsPerTask(int64_t elementsPerRow);

/// Vectorizes dim 0 of `f` (a root or output Func of `tensor`'s shape) and
/// runs its other dims, fused into one row loop when they are static (else
/// the innermost of them alone), in parallel tasks of about
/// kElementwiseTaskElements elements. Returns the row loop inside a task
/// (dim 0 of `f` if it has no other dim), where per-row values go.
Halide::Var parallelRowBlocks(Halide::Func f, const TensorFunc &tensor,
                              int vector);

// Per-family schedules (one file each).
void scheduleElementwise(OpStages &op, ScheduleContext &ctx);
void scheduleGather(OpStages &op, const ScheduleContext &ctx);
void scheduleGemm(OpStages &op, ScheduleContext &ctx);
/// Whether `product` (an attn.matmul) can be computed in the output tiles
/// of its epilogue: it takes the register-tiled schedule (not a chunked
/// reduction over positions).
bool canFuseIntoEpilogue(const OpStages &product, const ScheduleContext &ctx);
/// Whether scheduleGemm reduces `product` in chunks of positions
/// (scheduleChunkedProduct): static sizes, at most one block of rows, at
/// least two chunks of positions.
bool reducesInChunks(const OpStages &product, const ScheduleContext &ctx);
/// Whether one register tile of `product` spans its rows (static sizes, a
/// row of at most gemm.tileVectors whole vectors), so an epilogue can sum
/// the rows in its tiles.
bool tileSpansRows(const OpStages &product, const ScheduleContext &ctx);
/// The register-tiled schedule of `product` with `out` as the Func whose
/// tiles compute it: the product's own result, or its epilogue. Returns the
/// loop of the parallel tasks (each a block of rows).
Halide::LoopLevel scheduleProductTiles(OpStages &product, Halide::Func out,
                                       const ScheduleContext &ctx);
void scheduleNormalize(OpStages &op, const ScheduleContext &ctx);
void scheduleScan(OpStages &op, const ScheduleContext &ctx);
void scheduleEfficient(OpStages &op, const ScheduleContext &ctx);
void scheduleRowAttention(OpStages &op, const ScheduleContext &ctx);
void scheduleMaterializedAttention(OpStages &op, const ScheduleContext &ctx);
void scheduleAttentionGradRows(OpStages &op, const ScheduleContext &ctx);
void scheduleAttentionGradKeys(OpStages &op, const ScheduleContext &ctx);
void scheduleAttentionGradOnePass(OpStages &op, const ScheduleContext &ctx);
void scheduleChoice(OpStages &op, const ScheduleContext &ctx);
void scheduleDeformableGradSamples(OpStages &op, const ScheduleContext &ctx);
void scheduleDeformableGradValue(OpStages &op, const ScheduleContext &ctx);
void scheduleDeformableGradSlice(OpStages &op, ScheduleContext &ctx);
/// Every family on a GPU target (ScheduleGpu.cpp).
void scheduleGpu(OpStages &op, const ScheduleContext &ctx);

/// Schedules every op of `algorithm` for `target`.
void scheduleKernel(KernelAlgorithm &algorithm, const ScheduleParams &params,
                    const Halide::Target &target);

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_SCHEDULE_H
