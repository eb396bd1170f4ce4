//===- Console.h - Where the api layer reports while it works ---*- C++ -*-===//
//
// How the api layer reports. A call that fails returns failure() and either
// sets a `std::string &error` out-parameter, which the caller reports (the
// tools print "<tool>: error: <message>" and exit 1), or leaves it empty when
// the failure was already reported: as MLIR diagnostics (file:line:col in the
// spec), or on the Console. What a call reports while it works goes to a
// Console: result lines (`check:`, `bench:`, `report:`, `verify-rewrites:`)
// to `out`, progress lines (`tune:`), warnings and the errors it does not
// stop for to `err`.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_CONSOLE_H
#define ATTN_API_CONSOLE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::attn::api {

struct Console {
  /// Names the reporter in warnings and errors ("attn-compile: warning: ...").
  std::string tool = "attn";
  llvm::raw_ostream *out = &llvm::outs(); ///< result lines
  llvm::raw_ostream *err = &llvm::errs(); ///< progress, warnings, errors

  void warning(const llvm::Twine &message) const {
    llvm::WithColor::warning(*err, tool) << message << "\n";
  }
  void error(const llvm::Twine &message) const {
    llvm::WithColor::error(*err, tool) << message << "\n";
  }
  /// A tool's exit on failure: prints `message` as an error unless it is
  /// empty (the failure was reported already); returns exit code 1.
  int fail(const std::string &message) const {
    if (!message.empty())
      error(message);
    return 1;
  }
};

} // namespace mlir::attn::api

#endif // ATTN_API_CONSOLE_H
