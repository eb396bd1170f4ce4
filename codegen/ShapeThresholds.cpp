//===- ShapeThresholds.cpp - Sizes where a CPU schedule changes form ------===//

#include "codegen/ShapeThresholds.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <numeric>

using namespace mlir::attn::codegen;

bool mlir::attn::codegen::columnPanelConflictsInL1(int64_t rowBytes,
                                                   int64_t tileBytes,
                                                   int64_t rows) {
  constexpr int64_t kLine = 64, kSets = 64, kWaysForPanel = 8 - 2;
  if (rowBytes % kLine != 0 || tileBytes % kLine != 0)
    return false; // row starts spread over the sets
  int64_t linesPerRow = tileBytes / kLine;
  int64_t startSets = kSets / std::gcd(kSets, rowBytes / kLine);
  int64_t setsTouched = std::min(kSets, startSets * linesPerRow);
  return rows * linesPerRow > setsTouched * kWaysForPanel;
}

std::vector<SizeThreshold>
mlir::attn::codegen::sizeThresholds(const ScheduleParams &params,
                                    int vectorWidth) {
  auto width = [&](int requested) {
    return static_cast<int64_t>(requested > 0 ? requested
                                              : std::max(1, vectorWidth));
  };
  const GemmParams &gemm = params.gemm;
  const AttentionParams &attention = params.attention;
  const ChunkedProductParams &chunked = params.chunkedProduct;
  const DeformableParams &deformable = params.deformable;
  int64_t gemmVector = width(gemm.vectorWidth);
  int64_t attentionVector = width(attention.vectorWidth);
  int64_t reductionVector = width(params.reduction.vectorWidth);
  int64_t deformableVector = width(deformable.vectorWidth);
  const unsigned rowsAndCols = kQueryAxis | kFeatureAxis;
  const unsigned everyDim = kQueryAxis | kKeyAxis | kFeatureAxis | kChannelAxis;
  std::vector<SizeThreshold> list = {
      {"vector width", width(0), 0, everyDim,
       "whole vectors without a tail (vectorize, GuardWithIf tails below)"},
      {"2 x reduction.vectorWidth", 2 * reductionVector, reductionVector,
       kKeyAxis | kFeatureAxis,
       "row statistics reduce in vector lanes (scheduleRowStatistic)"},
      {"kMaxRegisterAccumulators x vector",
       kMaxRegisterAccumulators * reductionVector, reductionVector,
       kFeatureAxis | kKeyAxis,
       "accumulators unrolled in registers up to this many features"},
      {"gemm.tileVectors x vector", gemmVector * gemm.tileVectors, 0,
       kFeatureAxis,
       "a product's columns span more than one register tile (rhs panel; "
       "an epilogue no longer sums its rows in the tiles, tileSpansRows)"},
      {"2 x gemm.tileVectors x vector", 2 * gemmVector * gemm.tileVectors,
       gemmVector * gemm.tileVectors, kFeatureAxis,
       "a chunked product's columns run in column tiles (a multiple of "
       "the register tile's columns)",
       2 * int64_t(chunked.chunk)},
      {"gemm.tileRows", gemm.tileRows, 0, kQueryAxis,
       "a product's rows fill a register tile"},
      {"gemm.blockRows", gemm.blockRows + 1, 0, kQueryAxis,
       "a product with more rows than one block is tiled by row blocks, "
       "not reduced in chunks (scheduleGemm, canFuseIntoEpilogue)"},
      {"2 x reduction.chunk", 2 * int64_t(params.reduction.chunk), 0,
       kKeyAxis | kQueryAxis,
       "a reduction over positions splits into parallel chunks (rfactor; "
       "attn.normalize softmax takes its max and sum per chunk)"},
      {"2 x chunkedProduct.chunk", 2 * int64_t(chunked.chunk), chunked.chunk,
       kKeyAxis,
       "K^T V products reduce in parallel chunk tasks; attn.efficient's "
       "softmax takes its maxima per chunk at multiples of the chunk"},
      {"chunkedProduct.positionBlock", chunked.positionBlock, 0, kKeyAxis,
       "blocks of positions inside a chunk task"},
      {"chunkedProduct.tileRows", chunked.tileRows, 0, kFeatureAxis,
       "rows of a K^T V register tile"},
      {"attention.queryBlock", attention.queryBlock, 0, kQueryAxis,
       "queries per block of row attention"},
      {"2 x attention.queryBlock + 1", 2 * int64_t(attention.queryBlock) + 1, 0,
       kQueryAxis,
       "row attention with more rows than two blocks runs several blocks "
       "(fewer: one block)"},
      {"2 x attention.splitQueryBlock + 1",
       2 * int64_t(attention.splitQueryBlock) + 1, 0, kQueryAxis,
       "key-split attention with more rows than two blocks runs several "
       "blocks and transposes K once at root (fewer: per split)"},
      {"attention.tileRows", attention.tileRows, 0, kQueryAxis,
       "rows of a score register tile"},
      {"attention.tileVectors x vector",
       attentionVector * attention.tileVectors, 0, kKeyAxis | kFeatureAxis,
       "keys per score register tile, columns per value tile"},
      {"attention.valueKeyChunk", attention.valueKeyChunk, 0, kKeyAxis,
       "weights x V runs over chunks of keys"},
      {"kRowMaxLanes", kRowMaxLanes, 0, kKeyAxis,
       "row maxima run in lanes over groups of keys (defineLaneMax)"},
      {"kKeyRowPeriodBytes / 4", kKeyRowPeriodBytes / 4, kKeyRowPeriodBytes / 4,
       kKeyAxis, "keyT rows are padded against L1 set conflicts"},
      {"attention.materializedBlock", attention.materializedBlock, 0,
       rowsAndCols, "rows per task of materialized attention's products"},
      {"attentionGrad.onePassQueryBlock",
       params.attentionGrad.onePassQueryBlock,
       params.attentionGrad.onePassQueryBlock, kQueryAxis,
       "the softmax backward with saved statistics runs one pass when the "
       "queries split into whole blocks (and the keys, below)"},
      {"attentionGrad.onePassKeyBlock", params.attentionGrad.onePassKeyBlock,
       params.attentionGrad.onePassKeyBlock, kKeyAxis,
       "the one-pass softmax backward's key blocks"},
      {"deformable.queriesPerTask", deformable.queriesPerTask, 0, kQueryAxis,
       "queries per parallel task of deformable sampling"},
      {"deformable.maxChannelVectors x vector",
       deformableVector * deformable.maxChannelVectors + 1, 0, kChannelAxis,
       "channels per (query, head) no longer one vector: vector-wide chunks"},
      {"deformable.vectorWidth + 1", deformableVector + 1, deformableVector,
       kPointAxis,
       "the points of a level in more than one vector (a guarded last "
       "one unless P is a multiple)"},
      {"kUnrolledLevels + 1", kUnrolledLevels + 1, 0, kLevelAxis,
       "the corner pass loops over the levels (unrolled up to "
       "kUnrolledLevels)"},
  };
  // The key split: m static, more than one split, the last one ragged
  // unless m is a multiple (AlgorithmOptions::keySplit; causalKeySplit for
  // causal attention).
  for (auto [knob, split] : {std::pair<const char *, int>{"attention.keySplit",
                                                         attention.keySplit},
                             {"attention.causalKeySplit",
                              attention.causalKeySplit}}) {
    if (split <= 0)
      continue;
    list.push_back({std::string(knob) + " + 1", int64_t(split) + 1, 0,
                    kKeyAxis,
                    "softmax over keys attends to each key split on its own "
                    "and merges them (the last split ragged)"});
    list.push_back({"2 x " + std::string(knob), 2 * int64_t(split), split,
                    kKeyAxis, "key splits without a ragged last one"});
  }
  // Few query rows (AlgorithmOptions::fewRows): split-KV in parts of
  // keyPart keys, for at most fewRows rows.
  if (attention.fewRows > 0 && attention.keyPart > 0) {
    list.push_back({"attention.fewRows + 1", int64_t(attention.fewRows) + 1,
                    0, kQueryAxis,
                    "more query rows than split-KV takes: row blocks"});
    list.push_back({"attention.keyPart + 1", int64_t(attention.keyPart) + 1,
                    attention.keyPart, kKeyAxis,
                    "split-KV over several parts of keys (few query rows)"});
  }
  // A chunked product's column tiles of f32 rows that collide in L1 are
  // copied into panels: the first multiple of the tile's columns where they
  // do (its rows then 2^k bytes apart).
  int64_t tileCols = gemmVector * std::max(1, gemm.tileVectors);
  int64_t block = std::max(1, chunked.positionBlock);
  for (int64_t cols = 2 * tileCols; cols <= 64 * tileCols; cols += tileCols)
    if (columnPanelConflictsInL1(cols * 4, tileCols * 4, block)) {
      list.push_back({"chunked column panel", cols, tileCols, kFeatureAxis,
                      "a chunked product copies each block's rows of a "
                      "column tile into a contiguous panel (rows that "
                      "collide in L1)",
                      2 * int64_t(chunked.chunk)});
      break;
    }
  // Elementwise outputs run in tasks of kElementwiseTaskElements elements:
  // a row of more elements is a task of its own.
  list.push_back({"kElementwiseTaskElements", kElementwiseTaskElements + 1, 0,
                  kFeatureAxis,
                  "elementwise rows longer than one task run one per task"});
  list.erase(std::remove_if(list.begin(), list.end(),
                            [](const SizeThreshold &t) { return t.size < 2; }),
             list.end());
  return list;
}

std::string
mlir::attn::codegen::sizeThresholdsJson(const ScheduleParams &params,
                                        int vectorWidth) {
  static const std::pair<unsigned, const char *> kAxisNames[] = {
      {kQueryAxis, "queries"},    {kKeyAxis, "keys"},
      {kFeatureAxis, "features"}, {kChannelAxis, "channels"},
      {kPointAxis, "points"},     {kLevelAxis, "levels"}};
  llvm::json::Array thresholds;
  for (const SizeThreshold &t : sizeThresholds(params, vectorWidth)) {
    llvm::json::Array axes;
    for (auto [bit, name] : kAxisNames)
      if (t.axes & bit)
        axes.push_back(name);
    thresholds.push_back(llvm::json::Object{{"name", t.name},
                                            {"size", t.size},
                                            {"period", t.period},
                                            {"axes", std::move(axes)},
                                            {"form", t.form},
                                            {"keys_at_least", t.keysAtLeast}});
  }
  llvm::json::Object document{{"vector_width", vectorWidth},
                              {"thresholds", std::move(thresholds)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(document)));
  return text;
}
