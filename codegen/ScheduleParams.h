//===- ScheduleParams.h - Knobs of the hand-written CPU schedules -*- C++
//-*-===//
//
// One parameter struct per op family. The algorithm (Algorithm*.cpp) never
// reads these; the schedules (Schedule*.cpp) do, so a tuner can search them
// without touching the algorithm. A vector width of 0 means "the natural
// width of the target" (8 floats on AVX2, 16 on AVX-512, 4 on NEON).
// Halide-free so tools can set them without including Halide.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_SCHEDULEPARAMS_H
#define ATTN_CODEGEN_SCHEDULEPARAMS_H

namespace mlir::attn::codegen {

/// Matrix products (attn.matmul, the last product of attention ops): an
/// output block of blockRows x (tileVectors * vectorWidth) per parallel task,
/// accumulated in registers tileRows rows at a time.
struct GemmParams {
  int vectorWidth = 0;
  int tileVectors = 4; ///< register tile width, in vectors
  int tileRows = 4;    ///< register tile height, in rows
  int blockRows = 64;  ///< rows per parallel task (at least: taskBytes)
  /// Bytes of output a parallel task writes at least, by more rows than
  /// blockRows while 16 tasks per batch remain; 0: blockRows only. Blocks
  /// of 64 rows of a narrow product (dv = 64: 16 KiB) restarted the hardware
  /// prefetchers of the streamed rows every task; 256 KiB measured 2-4%
  /// faster than 64 KiB on efficient and linear attention at n = 65536
  /// (AMD Zen 5 host).
  int taskBytes = 262144;
  /// 1: copy the rhs columns of each column tile into a contiguous panel
  /// per block, when the rhs has more columns than one tile or is
  /// transposed (scheduleTiledProduct's rhsPanel); 0: read the rhs in place.
  int packRhs = 1;
};

/// Reductions over positions (column softmax statistics, the statistics of
/// attn.normalize; K^T V products: ChunkedProductParams): split the
/// reduction into chunks of `chunk` positions with rfactor and reduce the
/// chunks in parallel.
struct ReductionParams {
  int vectorWidth = 0;
  int chunk = 256;
};

/// Exact dot-product attention: scores are computed for a block of
/// `queryBlock` queries at a time (never the whole n x m score matrix when
/// every normalization step is over keys).
struct AttentionParams {
  int vectorWidth = 0;
  int queryBlock = 32;
  int tileVectors = 4; ///< register tile of the score and value products
  int tileRows = 4;
  int valueTileVectors = 4; ///< register tile of weights x V (row attention)
  int valueTileRows = 4;
  /// Weights x V runs over keys in chunks of valueKeyChunk, the chunk loop
  /// outside the block's row tiles, so a chunk of V stays in L1 for the whole
  /// block (0: each row tile runs over every key).
  int valueKeyChunk = 64;
  /// Softmax attention over more keys than this (a multiple of it, and of
  /// 16) attends to each split of keySplit keys on its own and merges the
  /// splits (AlgorithmOptions::keySplit; CPU hand schedules only). 0: never.
  int keySplit = 1024;
  /// keySplit of causal attention: the merge skips every split that starts
  /// past a query block's last row, so finer splits skip more of the
  /// masked half (h8, n = 4096: 116 ms with 1024, 99 ms with 256; 183 ms
  /// without the mask).
  int causalKeySplit = 256;
  /// queryBlock when the keys are split: a split's scores are a fraction of
  /// a row, so a larger block fits, and K and V are read once per block.
  int splitQueryBlock = 64;
  /// Few query rows (decode): softmax attention whose problems have at most
  /// fewRows query rows (static) splits the keys into parts of keyPart keys
  /// (FlashDecoding's split-KV, AlgorithmOptions::fewRows): the parts of
  /// every problem run in parallel, each reading its slice of K and V
  /// once, straight from their rows (no transposed copy of K). 0: never.
  int fewRows = 16;
  /// Keys per part of the few-rows form (a multiple of 16); any m, the
  /// last part ragged.
  int keyPart = 512;
  /// Rows per parallel task of materialized attention's two products (the
  /// scores, then weights x V); EANet's tuning found 64 ahead of 32.
  int materializedBlock = 64;
};

/// attn.attention_grad, the fused softmax backward (ScheduleAttentionGrad.cpp).
struct AttentionGradParams {
  int vectorWidth = 0;
  /// The row pass keeps three rows x m buffers per block of query rows
  /// (scores, their exponentials, dP); the block has as many rows as fit
  /// in rowBlockBytes (a multiple of tileRows, at most 64), so they stay in
  /// L2 (1-2 MiB per core on the machines we run).
  int rowBlockBytes = 768 * 1024;
  /// Keys per parallel task of the key pass: its dK and dV rows stay in L1
  /// while every chunk of queries streams past them.
  int keyBlock = 64;
  /// Queries per chunk of the key pass: P and dP of keyBlock x queryChunk
  /// are computed, then both accumulated into dK and dV.
  int queryChunk = 256;
  int tileVectors = 4; ///< register tiles of the products
  int tileRows = 4;
  /// With the forward's saved lse and output (D = rowsum(dO O)), one pass
  /// instead of the two: per batch index (the parallel tasks, at least 2),
  /// key blocks of onePassKeyBlock keys and in each query blocks of
  /// onePassQueryBlock queries, whose P and dS feed dK, dV and dQ (five
  /// products instead of seven). Needs static sizes that split into whole
  /// blocks; 0 keeps the two passes.
  int onePassQueryBlock = 64;
  int onePassKeyBlock = 64;
};

/// Chunked products: a product reduced over many positions into few rows,
/// like K^T V (attn.efficient's context, and an attn.matmul with at most
/// GemmParams::blockRows rows). Chunks of `chunk` positions reduce in
/// parallel tasks; each task runs register tiles of tileRows rows over
/// blocks of positionBlock positions of its chunk.
struct ChunkedProductParams {
  int chunk = 1024;
  /// Positions per block of a chunk: each register tile runs over one
  /// block, whose rows of V stay in L1 for all the tiles, then adds into
  /// the chunk's partial (a divisor of chunk; otherwise the whole chunk is
  /// one block).
  int positionBlock = 64;
  /// Blocks ahead that the register tiles prefetch the rows of the streamed
  /// operand (V, when it is an input buffer); 0: no prefetch; -1: by target
  /// (scheduleKernel): 1 on AMD Zen cores, 0 elsewhere. Every tile of a
  /// block reads the same rows of V, so without it the first tile waited on
  /// memory for the whole block's rows while the others waited on nothing
  /// (efficient attention at n = 65536 on Zen 5: 7% faster with 1). On an
  /// Intel Emerald Rapids host the same prefetches made it 1.7x slower.
  int prefetchBlocks = -1;
  int tileRows = 4; ///< register tile height, in rows of the product
  /// 1: attn.efficient's softmax over positions takes its max per chunk in
  /// the chunk's task (AlgorithmOptions::efficientChunk); 0: in a pass of
  /// its own over K first. Which is faster depends on the machine: 1 was 5%
  /// faster at n = 65536 where memory bandwidth is low against the FMA
  /// peak (7 FLOP/byte), 0 was faster where it is high (15 FLOP/byte).
  int chunkMaxima = 1;
};

/// Elementwise ops (scale, feature_map, add, causal_mask, reshapes): inlined
/// into their consumer; when they are a kernel output, vectorized and split
/// into parallel rows.
struct ElementwiseParams {
  int vectorWidth = 0;
};

/// attn.deformable (ScheduleElementwise.cpp): blocks of queriesPerTask
/// queries run in parallel; per (query, head) the D channels are one vector
/// when D <= maxChannelVectors * vectorWidth, else vector-wide chunks.
struct DeformableParams {
  int vectorWidth = 0;
  int queriesPerTask = 16;
  int maxChannelVectors = 4;
};

/// GPU schedules (ScheduleGpu.cpp), used when the target has a GPU feature
/// (cuda, opencl, ...). Thread-block shapes are in threads; sizes that do
/// not divide the extent are guarded.
struct GpuParams {
  int tileX = 16;      ///< threads along dim 0 (contiguous) of a 2-D tile
  int tileY = 16;      ///< threads along dim 1
  int threads1D = 128; ///< threads per block for 1-D loops
  /// Reductions over positions longer than 2 * chunk are split into chunks
  /// reduced by separate blocks (rfactor), then merged.
  int chunk = 256;
  /// Row attention: queries per block; the block's scores (queryBlock x m)
  /// stay in shared memory when they fit sharedBytes, else in a global
  /// scratch of queriesPerLaunch x m (never n x m for large n).
  int queryBlock = 16;
  int valueThreads = 32; ///< threads along the value dim of attention output
  int keyThreads = 32;   ///< threads along keys when computing scores
  int queriesPerLaunch = 2048;
  int sharedBytes = 48 * 1024;
};

/// Reduced precision (docs/precision.md): where products of bf16 values
/// reduce in pairs (the scores Q K^T on bf16 Q and K; with an op's
/// attn.allow_bf16_products, its rounded weights' products too).
struct PrecisionParams {
  /// 1: on targets whose bf16 dot product outruns the f32 FMA (Zen 4,
  /// Zen 5), where Halide makes each pair one vdpbf16ps lane; not on
  /// Sapphire Rapids, whose vdpbf16ps has half the FMA's FLOP rate;
  /// 2: on every CPU target (without vdpbf16ps the same arithmetic is
  /// slower, but it runs the paired algorithm and its rounding, so tests
  /// check them on any host); 0: never.
  int bf16Pairs = 1;
};

struct ScheduleParams {
  GemmParams gemm;
  ReductionParams reduction;
  AttentionParams attention;
  AttentionGradParams attentionGrad;
  ChunkedProductParams chunkedProduct;
  ElementwiseParams elementwise;
  DeformableParams deformable;
  GpuParams gpu;
  PrecisionParams precision;
};

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_SCHEDULEPARAMS_H
