//===- TuningCacheTest.cpp - The tuning cache round-trips and distrusts ---===//
//
// The cache file written by attn-compile --tune: what is saved loads back
// field for field, and every class of corruption (bad JSON, wrong format,
// missing or ill-typed fields, out-of-range parameters, a key that does not
// match its fields, another attn version) is reported as a warning naming
// the file and the entry is ignored, never used. And the knob groups the
// tuner searches follow the kernel's ops and element types.
//
//===----------------------------------------------------------------------===//

#include "api/TuningCache.h"
#include "api/Tuner.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::attn::tuning;
namespace json = llvm::json;

namespace {

CacheEntry sampleEntry(const std::string &function = "attention") {
  CacheEntry entry;
  entry.key = {function, std::string(64, 'a'), "2x64x32xf32,2x64x32xf32",
               "x86-64-linux-avx2-fma", attnVersion().str()};
  entry.params.gemm.tileRows = 8;
  entry.params.attention.queryBlock = 64;
  entry.params.reduction.vectorWidth = 16;
  entry.candidate = "gemm.tileRows=8 attention.queryBlock=64";
  entry.timeMs = 1.25;
  entry.defaultTimeMs = 2.5;
  entry.candidatesTried = 17;
  return entry;
}

void expectSameEntry(const CacheEntry &a, const CacheEntry &b) {
  EXPECT_EQ(a.key.str(), b.key.str());
  EXPECT_EQ(a.autoscheduler, b.autoscheduler);
  for (const ScheduleKnob &knob : scheduleKnobs())
    EXPECT_EQ(knob.get(a.params), knob.get(b.params))
        << knob.group << "." << knob.name;
  EXPECT_EQ(a.candidate, b.candidate);
  EXPECT_DOUBLE_EQ(a.timeMs, b.timeMs);
  EXPECT_EQ(a.defaultTimeMs, b.defaultTimeMs);
  EXPECT_EQ(a.candidatesTried, b.candidatesTried);
}

/// A scratch directory removed at the end of the test.
struct ScratchDir {
  SmallString<128> path;
  ScratchDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-cache-test", path));
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(StringRef name) const {
    SmallString<128> result(path);
    llvm::sys::path::append(result, name);
    return std::string(result);
  }
};

TEST(TuningCache, RoundTripsThroughJson) {
  TuningCache cache;
  CacheEntry tuned = sampleEntry("tuned");
  CacheEntry scheduled = sampleEntry("autoscheduled");
  scheduled.autoscheduler = "Adams2019";
  scheduled.candidate = "Adams2019";
  scheduled.defaultTimeMs.reset(); // the default was rejected
  cache.insert(tuned);
  cache.insert(scheduled);

  std::vector<std::string> warnings;
  TuningCache loaded = TuningCache::parse(cache.toJson(), "mem", warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(loaded.size(), 2u);
  ASSERT_NE(loaded.lookup(tuned.key), nullptr);
  expectSameEntry(*loaded.lookup(tuned.key), tuned);
  ASSERT_NE(loaded.lookup(scheduled.key), nullptr);
  expectSameEntry(*loaded.lookup(scheduled.key), scheduled);
  // Another key (here: another target) misses.
  CacheKey other = tuned.key;
  other.target = "arm-64-linux";
  EXPECT_EQ(loaded.lookup(other), nullptr);
}

TEST(TuningCache, SavesAtomicallyAndLoadsBack) {
  ScratchDir dir;
  std::string path = dir.file("sub/dir/cache.json");
  TuningCache cache;
  cache.insert(sampleEntry());
  std::string error;
  ASSERT_TRUE(succeeded(cache.save(path, error))) << error;
  // Only the cache itself: the temporary file was renamed over it.
  std::error_code ec;
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(dir.file("sub/dir"), ec), end;
       it != end && !ec; it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1u);

  std::vector<std::string> warnings;
  FailureOr<TuningCache> loaded = TuningCache::load(path, error, warnings);
  ASSERT_TRUE(succeeded(loaded)) << error;
  EXPECT_TRUE(warnings.empty());
  ASSERT_NE(loaded->lookup(sampleEntry().key), nullptr);
  expectSameEntry(*loaded->lookup(sampleEntry().key), sampleEntry());
}

TEST(TuningCache, MissingFileIsEmptyAndDirectoryIsAnError) {
  ScratchDir dir;
  std::string error;
  std::vector<std::string> warnings;
  FailureOr<TuningCache> missing =
      TuningCache::load(dir.file("none.json"), error, warnings);
  ASSERT_TRUE(succeeded(missing));
  EXPECT_EQ(missing->size(), 0u);
  EXPECT_TRUE(warnings.empty());

  FailureOr<TuningCache> directory =
      TuningCache::load(dir.path, error, warnings);
  EXPECT_TRUE(failed(directory));
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
}

/// The JSON of a cache holding one good entry ("good") and one entry
/// ("bad") edited by `corrupt`.
std::string corruptedCache(
    const std::function<void(json::Object &entry, std::string &key)>
        &corrupt) {
  TuningCache cache;
  cache.insert(sampleEntry("good"));
  cache.insert(sampleEntry("bad"));
  json::Value root = cantFail(json::parse(cache.toJson()));
  json::Object &entries = *root.getAsObject()->getObject("entries");
  std::string badKey = sampleEntry("bad").key.str();
  json::Object bad = *entries.getObject(badKey);
  entries.erase(badKey);
  std::string key = badKey;
  corrupt(bad, key);
  entries[key] = std::move(bad);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << root;
  return text;
}

struct Corruption {
  const char *name;
  std::function<void(json::Object &, std::string &)> corrupt;
  const char *warning; ///< part of the expected warning
};

json::Object &params(json::Object &entry, const char *group) {
  return *entry.getObject("schedule")->getObject("params")->getObject(group);
}

TEST(TuningCache, EveryCorruptedEntryIsReportedAndIgnored) {
  const Corruption corruptions[] = {
      {"missing key field",
       [](json::Object &e, std::string &) {
         e.getObject("key")->erase("target");
       },
       "has no string key.target"},
      {"key mismatch",
       [](json::Object &e, std::string &) {
         (*e.getObject("key"))["target"] = "arm-64-linux";
       },
       "does not match its key fields"},
      {"older version",
       [](json::Object &e, std::string &key) {
         (*e.getObject("key"))["attn_version"] = "0.0.1";
         CacheKey edited = sampleEntry("bad").key;
         edited.attnVersion = "0.0.1";
         key = edited.str();
       },
       "is stale: tuned by attn 0.0.1"},
      {"missing schedule",
       [](json::Object &e, std::string &) { e.erase("schedule"); },
       "has no \"schedule\" object"},
      {"unknown autoscheduler",
       [](json::Object &e, std::string &) {
         (*e.getObject("schedule"))["autoscheduler"] = "Magic2030";
       },
       "unknown autoscheduler 'Magic2030'"},
      {"missing parameter",
       [](json::Object &e, std::string &) {
         params(e, "gemm").erase("tileRows");
       },
       "has no schedule.params.gemm.tileRows"},
      {"ill-typed parameter",
       [](json::Object &e, std::string &) {
         params(e, "attention")["queryBlock"] = "64";
       },
       "schedule.params.attention.queryBlock is not an integer"},
      {"fractional parameter",
       [](json::Object &e, std::string &) {
         params(e, "attention")["queryBlock"] = 6.5;
       },
       "schedule.params.attention.queryBlock is not an integer"},
      {"out-of-range parameter",
       [](json::Object &e, std::string &) {
         params(e, "gemm")["tileRows"] = -4;
       },
       "schedule.params.gemm.tileRows = -4 is out of range"},
      {"vector width not a power of two",
       [](json::Object &e, std::string &) {
         params(e, "reduction")["vectorWidth"] = 12;
       },
       "schedule.params.reduction.vectorWidth = 12 is out of range"},
      {"non-positive time",
       [](json::Object &e, std::string &) { e["time_ms"] = 0; },
       "positive number \"time_ms\""},
      {"ill-typed default time",
       [](json::Object &e, std::string &) { e["default_time_ms"] = "fast"; },
       "\"default_time_ms\" that is neither null nor a positive number"},
      {"missing candidate count",
       [](json::Object &e, std::string &) { e.erase("candidates_tried"); },
       "\"candidates_tried\""},
  };
  for (const Corruption &corruption : corruptions) {
    SCOPED_TRACE(corruption.name);
    std::vector<std::string> warnings;
    TuningCache cache = TuningCache::parse(
        corruptedCache(corruption.corrupt), "cache.json", warnings);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("tuning cache cache.json: entry '"),
              std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find(corruption.warning), std::string::npos)
        << warnings[0];
    EXPECT_EQ(cache.size(), 1u) << "only the good entry survives";
    EXPECT_NE(cache.lookup(sampleEntry("good").key), nullptr);
    EXPECT_EQ(cache.lookup(sampleEntry("bad").key), nullptr);
  }
}

TEST(TuningCache, CorruptedFileIsReportedAndIgnored) {
  const std::pair<const char *, const char *> files[] = {
      {"{\"format\": \"attn-tuning-cache\", \"entries\": {", "not valid JSON"},
      {"[1, 2, 3]", "not an attn tuning cache"},
      {"{\"format\": \"something-else\", \"format_version\": 1, "
       "\"entries\": {}}",
       "not an attn tuning cache"},
      {"{\"format\": \"attn-tuning-cache\", \"format_version\": 99, "
       "\"entries\": {}}",
       "format_version is not 1"},
      {"{\"format\": \"attn-tuning-cache\", \"format_version\": 1}",
       "no \"entries\" object"},
      {"", "not valid JSON"},
  };
  for (auto [text, warning] : files) {
    SCOPED_TRACE(text);
    std::vector<std::string> warnings;
    TuningCache cache = TuningCache::parse(text, "c.json", warnings);
    EXPECT_EQ(cache.size(), 0u);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("tuning cache c.json: "), std::string::npos);
    EXPECT_NE(warnings[0].find(warning), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("ignoring the whole file"), std::string::npos);
  }
}

TEST(TuningCache, KnobsAcceptTheDefaults) {
  mlir::attn::codegen::ScheduleParams defaults;
  for (const ScheduleKnob &knob : scheduleKnobs()) {
    EXPECT_TRUE(knob.accepts(knob.get(defaults)))
        << knob.group << "." << knob.name;
    for (int value : knob.searchValues)
      EXPECT_TRUE(knob.accepts(value)) << knob.group << "." << knob.name;
  }
}

/// The groups relevantKnobGroups gives the one function of `ir`.
std::vector<std::string> knobGroupsOf(StringRef ir, bool gpu = false) {
  MLIRContext context;
  context.loadDialect<mlir::attn::AttnDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
  EXPECT_TRUE(module);
  if (!module)
    return {};
  func::FuncOp kernel = *module->getOps<func::FuncOp>().begin();
  return relevantKnobGroups(kernel, gpu);
}

TEST(TunerKnobGroups, FollowTheOpsAndElementTypes) {
  using Groups = std::vector<std::string>;
  // The bf16 pairs knob (precision.bf16Pairs) only where a tensor is bf16 ...
  constexpr const char *matmulF32 = R"mlir(
    func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
      %c = attn.matmul %a, %b : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
      return %c : tensor<64x16xf32>
    })mlir";
  EXPECT_EQ(knobGroupsOf(matmulF32),
            (Groups{"chunkedProduct", "elementwise", "gemm"}));
  // ... or where an op opts into rounding its f32 operands.
  constexpr const char *matmulOptIn = R"mlir(
    func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
      %c = attn.matmul %a, %b {attn.allow_bf16_products} : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
      return %c : tensor<64x16xf32>
    })mlir";
  EXPECT_EQ(knobGroupsOf(matmulOptIn),
            (Groups{"chunkedProduct", "elementwise", "gemm", "precision"}));
  constexpr const char *efficientBf16 = R"mlir(
    func.func @f(%q: tensor<64x32xbf16>, %k: tensor<128x32xbf16>, %v: tensor<128x16xbf16>) -> tensor<64x16xf32> {
      %o = attn.efficient %q, %k, %v variant softmax
          : tensor<64x32xbf16>, tensor<128x32xbf16>, tensor<128x16xbf16> -> tensor<64x16xf32>
      return %o : tensor<64x16xf32>
    })mlir";
  EXPECT_EQ(knobGroupsOf(efficientBf16),
            (Groups{"chunkedProduct", "elementwise", "gemm", "precision",
                    "reduction"}));
  constexpr const char *normalizeF16 = R"mlir(
    func.func @f(%x: tensor<64x32xf16>) -> tensor<64x32xf16> {
      %y = attn.normalize softmax %x dim 1 : tensor<64x32xf16>
      return %y : tensor<64x32xf16>
    })mlir";
  EXPECT_EQ(knobGroupsOf(normalizeF16), (Groups{"elementwise", "reduction"}));
  // A GPU target has its own schedules and knobs only.
  EXPECT_EQ(knobGroupsOf(efficientBf16, /*gpu=*/true), (Groups{"gpu"}));
}

} // namespace
