//===- TuningCache.cpp - Persistent, validated cache of tuned schedules ---===//

#include "api/TuningCache.h"

#include "codegen/Codegen.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::tuning;
namespace json = llvm::json;
using mlir::attn::codegen::ScheduleParams;

#ifndef ATTN_VERSION
#error "ATTN_VERSION must be defined by the build (CMake's PROJECT_VERSION)"
#endif

/// Identifies the file format; bumped when the layout changes.
static constexpr int64_t kFormatVersion = 1;
static constexpr const char *kFormatName = "attn-tuning-cache";

StringRef mlir::attn::tuning::attnVersion() { return ATTN_VERSION; }

bool ScheduleKnob::accepts(int64_t value) const {
  if (value < minValue || value > maxValue)
    return false;
  return !vectorWidth || value == 0 || llvm::isPowerOf2_64(value);
}

#define ATTN_KNOB(GROUP, NAME, MIN, MAX, VECTOR, ...)                          \
  ScheduleKnob {                                                               \
    #GROUP, #NAME, MIN, MAX, VECTOR, {__VA_ARGS__},                            \
        [](ScheduleParams &p) -> int & { return p.GROUP.NAME; }                \
  }

ArrayRef<ScheduleKnob> mlir::attn::tuning::scheduleKnobs() {
  // Search values bracket the defaults (ScheduleParams.h) by factors of two;
  // vector width 0 is the target's natural width.
  static const std::vector<ScheduleKnob> knobs = {
      ATTN_KNOB(gemm, vectorWidth, 0, 64, true, 0, 4, 8, 16),
      ATTN_KNOB(gemm, tileVectors, 1, 64, false, 1, 2, 3, 4, 6),
      ATTN_KNOB(gemm, tileRows, 1, 64, false, 1, 2, 4, 6, 8),
      ATTN_KNOB(gemm, blockRows, 1, 1 << 16, false, 8, 16, 32, 64, 128),
      ATTN_KNOB(gemm, packRhs, 0, 1, false, 0, 1),
      ATTN_KNOB(gemm, taskBytes, 0, 1 << 24, false, 0, 16384, 65536, 262144),
      ATTN_KNOB(reduction, vectorWidth, 0, 64, true, 0, 4, 8, 16),
      ATTN_KNOB(reduction, chunk, 1, 1 << 20, false, 64, 128, 256, 512, 1024,
                2048),
      ATTN_KNOB(attention, vectorWidth, 0, 64, true, 0, 4, 8, 16),
      ATTN_KNOB(attention, queryBlock, 1, 1 << 16, false, 8, 16, 32, 64, 128),
      ATTN_KNOB(attention, tileVectors, 1, 64, false, 1, 2, 4),
      ATTN_KNOB(attention, tileRows, 1, 64, false, 1, 2, 4, 8),
      ATTN_KNOB(attention, valueTileVectors, 1, 64, false, 1, 2, 4),
      ATTN_KNOB(attention, valueTileRows, 1, 64, false, 1, 2, 4, 8),
      ATTN_KNOB(attention, valueKeyChunk, 0, 1 << 20, false, 0, 32, 64, 128,
                256),
      ATTN_KNOB(attention, keySplit, 0, 1 << 20, false, 0, 256, 512, 1024,
                2048),
      ATTN_KNOB(attention, splitQueryBlock, 1, 1 << 16, false, 16, 32, 64,
                128),
      ATTN_KNOB(attention, causalKeySplit, 0, 1 << 20, false, 0, 128, 256,
                512, 1024),
      ATTN_KNOB(attention, fewRows, 0, 1 << 16, false, 0, 4, 8, 16, 32),
      ATTN_KNOB(attention, keyPart, 16, 1 << 20, false, 256, 512, 1024,
                2048),
      ATTN_KNOB(attention, materializedBlock, 1, 1 << 16, false, 16, 32, 64,
                128),
      ATTN_KNOB(attentionGrad, vectorWidth, 0, 64, true, 0, 4, 8, 16),
      ATTN_KNOB(attentionGrad, rowBlockBytes, 1024, 1 << 26, false, 262144,
                524288, 786432, 1572864),
      ATTN_KNOB(attentionGrad, keyBlock, 1, 1 << 16, false, 16, 32, 64, 128),
      ATTN_KNOB(attentionGrad, queryChunk, 1, 1 << 20, false, 64, 128, 256,
                512),
      ATTN_KNOB(attentionGrad, tileVectors, 1, 64, false, 1, 2, 4),
      ATTN_KNOB(attentionGrad, tileRows, 1, 64, false, 1, 2, 4, 8),
      ATTN_KNOB(attentionGrad, onePassQueryBlock, 0, 1 << 16, false, 0, 32, 64,
                128),
      ATTN_KNOB(attentionGrad, onePassKeyBlock, 0, 1 << 16, false, 0, 32, 64,
                128),
      ATTN_KNOB(chunkedProduct, chunk, 1, 1 << 20, false, 256, 512, 1024,
                2048, 4096),
      ATTN_KNOB(chunkedProduct, positionBlock, 1, 1 << 20, false, 16, 32, 64,
                128, 256),
      ATTN_KNOB(chunkedProduct, tileRows, 1, 64, false, 1, 2, 4, 8),
      ATTN_KNOB(chunkedProduct, chunkMaxima, 0, 1, false, 0, 1),
      ATTN_KNOB(chunkedProduct, prefetchBlocks, -1, 16, false, 0, 1, 2),
      ATTN_KNOB(elementwise, vectorWidth, 0, 64, true, 0, 4, 8, 16),
      ATTN_KNOB(precision, bf16Pairs, 0, 2, false, 0, 1, 2),
      ATTN_KNOB(gpu, tileX, 1, 1024, false, 8, 16, 32),
      ATTN_KNOB(gpu, tileY, 1, 1024, false, 4, 8, 16),
      ATTN_KNOB(gpu, threads1D, 1, 1024, false, 64, 128, 256),
      ATTN_KNOB(gpu, chunk, 1, 1 << 20, false, 128, 256, 512),
      ATTN_KNOB(gpu, queryBlock, 1, 1024, false, 8, 16, 32),
      ATTN_KNOB(gpu, valueThreads, 1, 1024, false, 16, 32, 64),
      ATTN_KNOB(gpu, keyThreads, 1, 1024, false, 16, 32, 64),
      ATTN_KNOB(gpu, queriesPerLaunch, 1, 1 << 24, false, 1024, 2048, 4096),
      ATTN_KNOB(gpu, sharedBytes, 1, 1 << 20, false, 48 * 1024),
  };
  return knobs;
}
#undef ATTN_KNOB

LogicalResult mlir::attn::tuning::setScheduleParam(StringRef assignment,
                                                   ScheduleParams &params,
                                                   std::string &error) {
  auto [name, text] = assignment.split('=');
  auto [group, field] = name.trim().split('.');
  for (const ScheduleKnob &knob : scheduleKnobs()) {
    if (group != knob.group || field != knob.name)
      continue;
    int64_t value;
    if (text.trim().getAsInteger(10, value) || !knob.accepts(value)) {
      error = "'" + assignment.str() + "': " + name.trim().str() +
              " takes an integer in [" + std::to_string(knob.minValue) + ", " +
              std::to_string(knob.maxValue) + "]" +
              (knob.vectorWidth ? ", 0 or a power of two" : "");
      return failure();
    }
    knob.field(params) = static_cast<int>(value);
    return success();
  }
  std::string known;
  for (const ScheduleKnob &knob : scheduleKnobs())
    known += std::string(known.empty() ? "" : ", ") + knob.group + "." +
             knob.name;
  error = "'" + assignment.str() +
          "': expected group.name=value with one of " + known;
  return failure();
}

std::string CacheKey::str() const {
  return function + "|" + specHash + "|" + shapes + "|" + target + "|" +
         attnVersion;
}

std::string mlir::attn::tuning::defaultCachePath() {
  SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty()) {
    path = *xdg;
  } else if (std::optional<std::string> home =
                 llvm::sys::Process::GetEnv("HOME");
             home && !home->empty()) {
    path = *home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "attn", "tuning-cache.json");
  return std::string(path);
}

namespace {

/// Reads one entry; returns the reason it is invalid, or "" and fills
/// `entry`.
std::string readEntry(StringRef storedKey, const json::Value &value,
                      CacheEntry &entry) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return "is not an object";
  const json::Object *key = object->getObject("key");
  if (!key)
    return "has no \"key\" object";
  auto keyField = [&](const char *name, std::string &out) -> std::string {
    std::optional<StringRef> text = key->getString(name);
    if (!text || text->empty())
      return std::string("has no string key.") + name;
    out = text->str();
    return "";
  };
  for (auto [name, out] :
       {std::pair<const char *, std::string *>{"function",
                                               &entry.key.function},
        {"spec_hash", &entry.key.specHash},
        {"shapes", &entry.key.shapes},
        {"target", &entry.key.target},
        {"attn_version", &entry.key.attnVersion}})
    if (std::string why = keyField(name, *out); !why.empty())
      return why;
  if (entry.key.str() != storedKey)
    return "is stored under a key that does not match its key fields";
  if (entry.key.attnVersion != attnVersion())
    return "is stale: tuned by attn " + entry.key.attnVersion +
           ", this is attn " + attnVersion().str();

  const json::Object *schedule = object->getObject("schedule");
  if (!schedule)
    return "has no \"schedule\" object";
  std::optional<StringRef> autoscheduler = schedule->getString("autoscheduler");
  if (!autoscheduler)
    return "has no string schedule.autoscheduler";
  if (!autoscheduler->empty() &&
      !llvm::is_contained(mlir::attn::codegen::knownAutoschedulers(), *autoscheduler))
    return "names an unknown autoscheduler '" + autoscheduler->str() + "'";
  entry.autoscheduler = autoscheduler->str();
  const json::Object *params = schedule->getObject("params");
  if (!params)
    return "has no schedule.params object";
  for (const ScheduleKnob &knob : scheduleKnobs()) {
    std::string where =
        std::string("schedule.params.") + knob.group + "." + knob.name;
    const json::Object *group = params->getObject(knob.group);
    if (!group)
      return std::string("has no schedule.params.") + knob.group + " object";
    const json::Value *field = group->get(knob.name);
    if (!field)
      return "has no " + where;
    std::optional<int64_t> number = field->getAsInteger();
    if (!number)
      return where + " is not an integer";
    if (!knob.accepts(*number))
      return where + " = " + std::to_string(*number) + " is out of range";
    knob.field(entry.params) = static_cast<int>(*number);
  }
  std::optional<StringRef> candidate = object->getString("candidate");
  if (!candidate)
    return "has no string \"candidate\"";
  entry.candidate = candidate->str();
  std::optional<double> time = object->getNumber("time_ms");
  if (!time || !std::isfinite(*time) || *time <= 0)
    return "has no positive number \"time_ms\"";
  entry.timeMs = *time;
  const json::Value *defaultTime = object->get("default_time_ms");
  if (!defaultTime)
    return "has no \"default_time_ms\" (a number, or null)";
  if (defaultTime->kind() != json::Value::Null) {
    std::optional<double> ms = defaultTime->getAsNumber();
    if (!ms || !std::isfinite(*ms) || *ms <= 0)
      return "has a \"default_time_ms\" that is neither null nor a positive "
             "number";
    entry.defaultTimeMs = *ms;
  }
  std::optional<int64_t> tried = object->getInteger("candidates_tried");
  if (!tried || *tried < 1 || *tried > (1 << 30))
    return "has no positive integer \"candidates_tried\"";
  entry.candidatesTried = static_cast<unsigned>(*tried);
  return "";
}

json::Value writeEntry(const CacheEntry &entry) {
  json::Object params;
  for (const ScheduleKnob &knob : scheduleKnobs()) {
    json::Value &group = params[knob.group];
    if (!group.getAsObject())
      group = json::Object();
    (*group.getAsObject())[knob.name] = knob.get(entry.params);
  }
  json::Value defaultTime = nullptr;
  if (entry.defaultTimeMs)
    defaultTime = *entry.defaultTimeMs;
  return json::Object{
      {"key", json::Object{{"function", entry.key.function},
                           {"spec_hash", entry.key.specHash},
                           {"shapes", entry.key.shapes},
                           {"target", entry.key.target},
                           {"attn_version", entry.key.attnVersion}}},
      {"schedule", json::Object{{"autoscheduler", entry.autoscheduler},
                                {"params", std::move(params)}}},
      {"candidate", entry.candidate},
      {"time_ms", entry.timeMs},
      {"default_time_ms", std::move(defaultTime)},
      {"candidates_tried", static_cast<int64_t>(entry.candidatesTried)}};
}

} // namespace

TuningCache TuningCache::parse(StringRef text, StringRef path,
                               std::vector<std::string> &warnings) {
  TuningCache cache;
  auto warn = [&](const llvm::Twine &why) {
    warnings.push_back(("tuning cache " + path + ": " + why).str());
  };
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    warn("not valid JSON (" + llvm::toString(parsed.takeError()) +
         "); ignoring the whole file");
    return cache;
  }
  const json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != StringRef(kFormatName)) {
    warn(llvm::Twine("not an attn tuning cache (no \"format\": \"") +
         kFormatName + "\"); ignoring the whole file");
    return cache;
  }
  if (root->getInteger("format_version") != kFormatVersion) {
    warn("format_version is not " + llvm::Twine(kFormatVersion) +
         "; ignoring the whole file");
    return cache;
  }
  const json::Object *entries = root->getObject("entries");
  if (!entries) {
    warn("no \"entries\" object; ignoring the whole file");
    return cache;
  }
  for (const auto &[key, value] : *entries) {
    CacheEntry entry;
    std::string why = readEntry(key, value, entry);
    if (!why.empty()) {
      warn("entry '" + key.str() + "' " + why + "; ignoring it");
      continue;
    }
    cache.entries[key.str()] = std::move(entry);
  }
  return cache;
}

FailureOr<TuningCache>
TuningCache::load(StringRef path, std::string &error,
                  std::vector<std::string> &warnings) {
  if (!llvm::sys::fs::exists(path))
    return TuningCache();
  if (llvm::sys::fs::is_directory(path)) {
    error = "tuning cache " + path.str() + " is a directory, not a file";
    return failure();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    error = "cannot read tuning cache " + path.str() + ": " +
            file.getError().message();
    return failure();
  }
  return parse((*file)->getBuffer(), path, warnings);
}

const CacheEntry *TuningCache::lookup(const CacheKey &key) const {
  auto it = entries.find(key.str());
  return it == entries.end() ? nullptr : &it->second;
}

void TuningCache::insert(const CacheEntry &entry) {
  entries[entry.key.str()] = entry;
}

std::string TuningCache::toJson() const {
  json::Object stored;
  for (const auto &[key, entry] : entries)
    stored[key] = writeEntry(entry);
  json::Value root = json::Object{{"format", kFormatName},
                                  {"format_version", kFormatVersion},
                                  {"entries", std::move(stored)}};
  return llvm::formatv("{0:2}", root).str() + "\n";
}

LogicalResult TuningCache::save(StringRef path, std::string &error) const {
  StringRef dir = llvm::sys::path::parent_path(path);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      error = "cannot create " + dir.str() + ": " + ec.message();
      return failure();
    }
  // A temporary file in the same directory, renamed over the cache: readers
  // see the old file or the new one, never a partial write.
  SmallString<256> temporary;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          path + ".tmp-%%%%%%", fd, temporary)) {
    error = "cannot write tuning cache " + path.str() + ": " + ec.message();
    return failure();
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << toJson();
    os.flush();
    if (os.has_error()) {
      error = "cannot write tuning cache " + path.str() + ": " +
              os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return failure();
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    error = "cannot write tuning cache " + path.str() + ": " + ec.message();
    llvm::sys::fs::remove(temporary);
    return failure();
  }
  return success();
}
