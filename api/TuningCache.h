//===- TuningCache.h - Persistent, validated cache of tuned schedules -*- C++
//-*-===//
//
// The tuner's results on disk: human-readable JSON (docs/tuning.md shows the
// format), one entry per (function, spec hash, argument shapes, resolved
// target, attn version). Nothing read from the file is trusted: every field
// is validated on load, and a corrupted file or entry (bad JSON, missing or
// ill-typed fields, out-of-range parameters, a key that does not match its
// fields, another attn version) is reported as a warning naming the file and
// ignored. Writes are atomic (temporary file + rename).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_TUNINGCACHE_H
#define ATTN_API_TUNINGCACHE_H

#include "codegen/ScheduleParams.h"

#include "mlir/Support/LLVM.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::tuning {

/// The attn version compiled in (CMake's PROJECT_VERSION).
StringRef attnVersion();

/// One integer knob of ScheduleParams: where it lives, the values the cache
/// accepts and the values the search tries.
struct ScheduleKnob {
  const char *group; ///< "gemm", "attention", ... (the JSON object)
  const char *name;  ///< field name (the JSON key)
  int minValue, maxValue;
  bool vectorWidth; ///< 0 or a power of two
  std::vector<int> searchValues;
  int &(*field)(codegen::ScheduleParams &);

  int get(const codegen::ScheduleParams &params) const {
    return field(const_cast<codegen::ScheduleParams &>(params));
  }
  bool accepts(int64_t value) const;
};

/// Every knob of ScheduleParams, in declaration order.
ArrayRef<ScheduleKnob> scheduleKnobs();

/// Sets one knob from "group.name=value" (e.g. "attention.queryBlock=64"),
/// the form of the tools' --schedule-param. On failure `error` says why and
/// lists the knobs.
LogicalResult setScheduleParam(StringRef assignment,
                               codegen::ScheduleParams &params,
                               std::string &error);

/// What a cached schedule is valid for.
struct CacheKey {
  std::string function;    ///< symbol name
  std::string specHash;    ///< SHA-256 of the function's IR after the passes
  std::string shapes;      ///< argument shapes and types, "2x64x32xf32,..."
  std::string target;      ///< resolved Halide target string
  std::string attnVersion; ///< attnVersion() when tuned

  /// The string the entry is stored under in the JSON file.
  std::string str() const;
  bool operator==(const CacheKey &other) const { return str() == other.str(); }
};

/// A tuned schedule: the hand schedules with `params`, or an autoscheduler.
struct CacheEntry {
  CacheKey key;
  std::string autoscheduler; ///< "" for the hand schedules
  codegen::ScheduleParams params;
  std::string candidate; ///< how the tuner described the winner
  double timeMs = 0.0;   ///< median time of the winner
  std::optional<double> defaultTimeMs; ///< none if the default was rejected
  unsigned candidatesTried = 0;
};

/// The default location: $XDG_CACHE_HOME/attn/tuning-cache.json, else
/// $HOME/.cache/attn/tuning-cache.json ("" if neither is set).
std::string defaultCachePath();

class TuningCache {
public:
  /// Reads `path`. A file that does not exist is an empty cache. A path
  /// that exists but cannot be read (a directory, no permission) fails with
  /// `error` set. Corrupted content is not an error: each problem is
  /// appended to `warnings` and the bad entries (or the whole file) are
  /// ignored.
  static FailureOr<TuningCache> load(StringRef path, std::string &error,
                                     std::vector<std::string> &warnings);
  /// Parses the text of a cache file (`path` only names it in warnings).
  static TuningCache parse(StringRef text, StringRef path,
                           std::vector<std::string> &warnings);

  /// The entry for `key`, if one was loaded or inserted.
  const CacheEntry *lookup(const CacheKey &key) const;
  void insert(const CacheEntry &entry);
  size_t size() const { return entries.size(); }

  /// The JSON text of the cache (entries sorted by key).
  std::string toJson() const;
  /// Writes the cache to `path` atomically, creating its directory.
  LogicalResult save(StringRef path, std::string &error) const;

private:
  std::map<std::string, CacheEntry> entries;
};

} // namespace mlir::attn::tuning

#endif // ATTN_API_TUNINGCACHE_H
