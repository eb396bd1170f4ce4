//===- Tuner.cpp - Schedule search for one kernel -------------------------===//

#include "api/Tuner.h"

#include "api/KernelCheck.h"
#include "codegen/Codegen.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <cmath>
#include <fcntl.h>
#include <poll.h>
#include <random>
#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
using namespace mlir::attn::tuning;
namespace cg = mlir::attn::codegen;
namespace rt = ::attn::runtime;
using Clock = std::chrono::steady_clock;

std::string Candidate::describe() const {
  if (!autoscheduler.empty())
    return autoscheduler;
  cg::ScheduleParams defaults;
  std::string text;
  for (const ScheduleKnob &knob : scheduleKnobs()) {
    int value = knob.get(params);
    if (value == knob.get(defaults))
      continue;
    if (!text.empty())
      text += " ";
    text += std::string(knob.group) + "." + knob.name + "=" +
            std::to_string(value);
  }
  return text.empty() ? "default" : text;
}

std::vector<std::string>
mlir::attn::tuning::relevantKnobGroups(func::FuncOp kernel, bool gpu) {
  if (gpu)
    return {"gpu"};
  // Which schedules (codegen/Schedule*.cpp) read which parameter struct.
  std::set<std::string> groups = {"elementwise"};
  // Pairs of bf16 products (precision.bf16Pairs) need bf16 tensors, or an
  // op's opt-in to rounding what it computes (attn.allow_bf16_products).
  kernel.walk([&](Operation *op) {
    if (op->hasAttr("attn.allow_bf16_products"))
      groups.insert("precision");
    for (Type type : op->getOperandTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && tensor.getElementType().isBF16())
        groups.insert("precision");
  });
  kernel.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (name == "attn.matmul") {
      groups.insert({"gemm", "chunkedProduct"});
    } else if (name == "attn.dot_product" || name == "attn.external") {
      groups.insert({"attention", "reduction"});
    } else if (name == "attn.efficient") {
      groups.insert({"chunkedProduct", "reduction", "gemm"});
    } else if (name == "attn.normalize" || name == "attn.prefix_sum" ||
               name == "attn.reduce_sum") {
      groups.insert("reduction");
    }
  });
  return std::vector<std::string>(groups.begin(), groups.end());
}

CacheKey mlir::attn::tuning::makeCacheKey(func::FuncOp kernel,
                                          ArrayRef<std::vector<int64_t>> shapes,
                                          StringRef resolvedTarget) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().enableDebugInfo(false));
  auto digest = llvm::SHA256::hash(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()),
                        text.size()));
  std::vector<std::string> shapeTexts;
  for (auto [index, dims] : llvm::enumerate(shapes)) {
    std::string shape = llvm::join(
        llvm::map_range(dims,
                        [](int64_t d) { return std::to_string(d); }),
        "x");
    // The element type as MLIR prints it (f32, f64, bf16, f16): a reduced
    // precision kernel is a key of its own.
    std::string element = "f32";
    if (index < kernel.getNumArguments())
      if (auto type = dyn_cast<RankedTensorType>(
              kernel.getArgument(index).getType())) {
        element.clear();
        llvm::raw_string_ostream elementText(element);
        elementText << type.getElementType();
      }
    shapeTexts.push_back((shape.empty() ? "" : shape + "x") + element);
  }
  return CacheKey{kernel.getSymName().str(),
                  llvm::toHex(digest, /*LowerCase=*/true),
                  llvm::join(shapeTexts, ","), resolvedTarget.str(),
                  attnVersion().str()};
}

namespace {

/// What happened to one candidate.
struct Outcome {
  enum Kind { Measured, Wrong, Failed, OutOfTime } kind = Failed;
  double ms = 0.0;
  double relError = 0.0;
  std::string message;
};

/// The child's side: compile, check, time; one line on `fd`:
/// "ok <ms> <rel err>", "wrong <rel err>" or "error <message>".
std::string runCandidate(func::FuncOp kernel, ArrayRef<rt::Tensor> inputs,
                         ArrayRef<rt::Tensor> reference,
                         const Candidate &candidate,
                         const TuneOptions &options) {
  std::string messages;
  ScopedDiagnosticHandler capture(kernel.getContext(), [&](Diagnostic &diag) {
    if (!messages.empty())
      messages += "; ";
    messages += diag.str();
    return success();
  });
  cg::CompileOptions compile;
  compile.target = options.target;
  compile.schedule = candidate.params;
  compile.argNames = options.argNames;
  compile.autoscheduler = candidate.autoscheduler;
  std::vector<cg::HostTensor> hostInputs;
  for (const rt::Tensor &input : inputs) {
    compile.shapeEstimates.push_back(input.shape);
    hostInputs.push_back({input.shape, input.data});
  }
  FailureOr<std::unique_ptr<cg::Kernel>> compiled =
      cg::Kernel::compileJit(kernel, compile);
  if (failed(compiled))
    return "error " + messages;
  cg::Kernel &k = **compiled;
  if (failed(k.setInputs(hostInputs)) || failed(k.run()))
    return "error " + messages;
  std::vector<rt::Tensor> results;
  for (cg::HostTensor &result : k.results())
    results.push_back(rt::Tensor(std::move(result.shape), std::move(result.data)));
  ReferenceComparison comparison = compareWithReference(results, reference);
  if (!comparison.mismatch.empty())
    return "error " + comparison.mismatch;
  std::string relError = llvm::formatv("{0:e}", comparison.maxRelError).str();
  if (!(comparison.maxRelError <= options.tolerance))
    return "wrong " + relError;
  FailureOr<Timing> timing =
      timeRuns(std::max(1u, options.timedRuns), [&] { return k.run(); });
  if (failed(timing))
    return "error " + messages;
  return "ok " + llvm::formatv("{0:e}", timing->medianMs).str() + " " +
         relError;
}

/// The last `count` characters of `path` (a child's stderr), for messages.
std::string tailOf(StringRef path, size_t count) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return "";
  StringRef text = (*file)->getBuffer().trim();
  if (text.size() > count)
    text = text.take_back(count);
  return text.str();
}

/// Runs one candidate in a child process, stopped at `deadline`.
Outcome evaluate(func::FuncOp kernel, ArrayRef<rt::Tensor> inputs,
                 ArrayRef<rt::Tensor> reference, const Candidate &candidate,
                 const TuneOptions &options, Clock::time_point deadline) {
  Outcome outcome;
  SmallString<128> logPath;
  int logFd = -1;
  if (llvm::sys::fs::createTemporaryFile("attn-tune", "log", logFd, logPath))
    logFd = -1;
  int fds[2];
  if (pipe(fds) != 0) {
    outcome.message = "cannot create a pipe";
    return outcome;
  }
  // Buffered output must not be written twice (by parent and child).
  llvm::outs().flush();
  llvm::errs().flush();
  fflush(nullptr);
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    outcome.message = "cannot fork";
    return outcome;
  }
  if (child == 0) {
    close(fds[0]);
    // Halide and the autoschedulers print to stdout/stderr; keep it out of
    // the tool's output (a failure quotes its end).
    int devNull = open("/dev/null", O_WRONLY);
    if (devNull >= 0)
      dup2(devNull, STDOUT_FILENO);
    if (logFd >= 0)
      dup2(logFd, STDERR_FILENO);
    std::string report =
        runCandidate(kernel, inputs, reference, candidate, options);
    for (size_t done = 0; done < report.size();) {
      ssize_t n = write(fds[1], report.data() + done, report.size() - done);
      if (n <= 0)
        break;
      done += n;
    }
    _exit(0);
  }
  close(fds[1]);
  if (logFd >= 0)
    close(logFd);
  std::string report;
  bool outOfTime = false;
  for (;;) {
    // Out of time exactly when the deadline has passed, as the search
    // loop's exhausted() sees it (milliseconds truncated towards zero
    // stopped a candidate up to 1 ms early, and the search then started
    // the next one).
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      outOfTime = true;
      break;
    }
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd poller{fds[0], POLLIN, 0};
    int ready = poll(&poller, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue;
    char chunk[4096];
    ssize_t n = read(fds[0], chunk, sizeof(chunk));
    if (n <= 0)
      break;
    report.append(chunk, n);
  }
  close(fds[0]);
  if (outOfTime)
    kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::string log = logPath.empty() ? "" : tailOf(logPath, 400);
  if (!logPath.empty())
    llvm::sys::fs::remove(logPath);
  if (outOfTime) {
    outcome.kind = Outcome::OutOfTime;
    outcome.message = "stopped: the budget is spent";
    return outcome;
  }
  if (WIFSIGNALED(status)) {
    outcome.message = "crashed (signal " + std::to_string(WTERMSIG(status)) +
                      ")" + (log.empty() ? "" : ": " + log);
    return outcome;
  }
  StringRef text = StringRef(report).trim();
  auto [kind, rest] = text.split(' ');
  if (kind == "ok") {
    auto [ms, rel] = rest.split(' ');
    outcome.kind = Outcome::Measured;
    if (ms.getAsDouble(outcome.ms) || rel.getAsDouble(outcome.relError) ||
        !(outcome.ms > 0)) {
      outcome.kind = Outcome::Failed;
      outcome.message = "unreadable result '" + text.str() + "'";
    }
    return outcome;
  }
  if (kind == "wrong") {
    outcome.kind = Outcome::Wrong;
    (void)rest.getAsDouble(outcome.relError);
    return outcome;
  }
  outcome.message = kind == "error" ? rest.str()
                    : text.empty()  ? "exited without a result"
                                    : "unreadable result '" + text.str() + "'";
  if (outcome.message.empty())
    outcome.message = log.empty() ? "failed" : log;
  return outcome;
}

/// Extra timings of each finalist (each in a new process).
constexpr unsigned kConfirmRounds = 2;

/// Four significant digits: microsecond kernels stay readable.
std::string formatMs(double ms) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.4g", ms);
  return text;
}

} // namespace

FailureOr<TuneResult> mlir::attn::tuning::tuneKernel(
    func::FuncOp kernel, ArrayRef<rt::Tensor> inputs,
    ArrayRef<rt::Tensor> reference, const TuneOptions &requested) {
  // A kernel with bf16/f16 values differs from the reference by rounding
  // (docs/precision.md): no candidate is held to less.
  TuneOptions options = requested;
  options.tolerance =
      std::max(options.tolerance, defaultCheckTolerance(kernel));
  std::optional<cg::TargetInfo> target = cg::describeTarget(options.target);
  if (!target)
    return kernel.emitError(cg::invalidTargetMessage(options.target));
  std::string name = kernel.getSymName().str();
  Clock::time_point start = Clock::now();
  auto budget = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options.budgetSeconds));
  Clock::time_point deadline = start + budget;
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };

  TuneResult result;
  std::optional<Candidate> best;
  double bestMs = INFINITY;
  // Wall time of each evaluation, to reserve time for the confirmation.
  std::map<std::string, double> evaluationSeconds;
  // The finalists of the confirmation: the best candidate, the default and
  // the fastest autoscheduler (each once).
  std::optional<Candidate> bestAutoscheduler;
  double bestAutoschedulerMs = INFINITY;
  auto finalists = [&] {
    std::vector<Candidate> result;
    auto add = [&](const std::optional<Candidate> &candidate) {
      if (candidate && llvm::none_of(result, [&](const Candidate &c) {
            return c.describe() == candidate->describe();
          }))
        result.push_back(*candidate);
    };
    add(best);
    if (evaluationSeconds.count("default"))
      add(Candidate());
    add(bestAutoscheduler);
    return result;
  };
  auto confirmationReserve = [&] {
    std::vector<Candidate> all = finalists();
    if (all.size() < 2)
      return 0.0;
    double seconds = 0;
    for (const Candidate &candidate : all)
      seconds += evaluationSeconds[candidate.describe()];
    return kConfirmRounds * seconds;
  };
  auto exhausted = [&](const TuneResult &r) {
    auto reserve = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(confirmationReserve()));
    return Clock::now() + reserve >= deadline ||
           (options.maxCandidates && r.tried >= options.maxCandidates);
  };
  auto progress = [&]() -> llvm::raw_ostream * { return options.progress; };
  auto line = [&](const Candidate &candidate, const Outcome &outcome) {
    llvm::raw_ostream *os = progress();
    if (!os)
      return;
    std::string what = candidate.describe();
    switch (outcome.kind) {
    case Outcome::Measured:
      *os << "tune: @" << name << " " << what << ": " << formatMs(outcome.ms)
          << " ms\n";
      break;
    case Outcome::Wrong:
      *os << "tune: @" << name << " rejected " << what << ": max rel err "
          << llvm::formatv("{0:e}", outcome.relError) << " > tolerance "
          << llvm::formatv("{0:e}", options.tolerance) << "\n";
      break;
    case Outcome::Failed:
      *os << "tune: @" << name << " rejected " << what << ": "
          << outcome.message << "\n";
      break;
    case Outcome::OutOfTime:
      *os << "tune: @" << name << " " << what << ": " << outcome.message
          << "\n";
      break;
    }
    *os << "tune: @" << name << " ["
        << llvm::format("%.0f", std::floor(elapsed())) << "/"
        << llvm::format("%g", options.budgetSeconds) << " s] tried "
        << result.tried << ", rejected " << result.rejected << ", best ";
    if (best)
      *os << formatMs(bestMs) << " ms (" << best->describe() << ")\n";
    else
      *os << "none yet\n";
    os->flush();
  };
  // Evaluates `candidate`; returns its time if it was measured. `stopped`
  // tells a candidate the deadline cut short from a rejected one.
  bool stopped = false;
  auto attempt = [&](const Candidate &candidate) -> std::optional<double> {
    Clock::time_point begin = Clock::now();
    Outcome outcome =
        evaluate(kernel, inputs, reference, candidate, options, deadline);
    evaluationSeconds[candidate.describe()] =
        std::chrono::duration<double>(Clock::now() - begin).count();
    stopped = outcome.kind == Outcome::OutOfTime;
    if (!stopped) {
      ++result.tried;
      if (outcome.kind != Outcome::Measured)
        ++result.rejected;
    }
    std::optional<double> ms;
    if (outcome.kind == Outcome::Measured) {
      ms = outcome.ms;
      if (outcome.ms < bestMs) {
        bestMs = outcome.ms;
        best = candidate;
      }
    }
    line(candidate, outcome);
    return ms;
  };

  // 1. The hand schedules as they are.
  Candidate defaults;
  result.defaultMs = attempt(defaults);
  // 2. The autoschedulers of the target class.
  std::vector<StringRef> autoschedulers;
  if (target->gpu)
    autoschedulers = {"Anderson2021"};
  else
    autoschedulers = {"Adams2019", "Mullapudi2016"};
  for (StringRef scheduler : autoschedulers) {
    if (exhausted(result))
      break;
    Candidate candidate;
    candidate.autoscheduler = scheduler.str();
    std::optional<double> ms = attempt(candidate);
    if (!stopped)
      result.autoschedulerMs.push_back({scheduler.str(), ms});
    if (ms && *ms < bestAutoschedulerMs) {
      bestAutoschedulerMs = *ms;
      bestAutoscheduler = candidate;
    }
  }
  // 3. Random coordinate search around the best hand-scheduled candidate.
  std::vector<const ScheduleKnob *> knobs;
  std::vector<std::string> groups = relevantKnobGroups(kernel, target->gpu);
  for (const ScheduleKnob &knob : scheduleKnobs())
    if (llvm::is_contained(groups, knob.group) && knob.searchValues.size() > 1)
      knobs.push_back(&knob);
  Candidate centre = defaults;
  double centreMs = result.defaultMs.value_or(INFINITY);
  std::set<std::string> seen = {defaults.describe()};
  std::mt19937_64 random(options.seed);
  unsigned repeats = 0;
  while (!knobs.empty() && !exhausted(result)) {
    Candidate next = centre;
    // Mostly one knob at a time (coordinate steps); sometimes two, to leave
    // a local minimum.
    unsigned changes = random() % 4 == 0 ? 2 : 1;
    for (unsigned c = 0; c < changes; ++c) {
      const ScheduleKnob &knob = *knobs[random() % knobs.size()];
      const std::vector<int> &values = knob.searchValues;
      knob.field(next.params) = values[random() % values.size()];
    }
    if (!seen.insert(next.describe()).second) {
      // The space around the centre is exhausted when nothing new turns up.
      if (++repeats > 2000)
        break;
      continue;
    }
    repeats = 0;
    std::optional<double> ms = attempt(next);
    if (ms && *ms < centreMs) {
      centre = next;
      centreMs = *ms;
    }
  }

  // 4. Confirmation: one timing on a loaded machine can mislead by 2x, so
  // the finalists (best, default, fastest autoscheduler) are timed again,
  // in turn in fresh processes, and the lowest median of each one's
  // timings wins.
  std::vector<Candidate> contenders = finalists();
  std::map<std::string, double> firstMs = {{best ? best->describe() : "",
                                            bestMs}};
  if (result.defaultMs)
    firstMs["default"] = *result.defaultMs;
  if (bestAutoscheduler)
    firstMs[bestAutoscheduler->describe()] = bestAutoschedulerMs;
  if (best && contenders.size() > 1) {
    std::vector<std::vector<double>> timings;
    for (const Candidate &candidate : contenders)
      timings.push_back({firstMs[candidate.describe()]});
    bool complete = true;
    for (unsigned round = 0; round < kConfirmRounds && complete; ++round) {
      std::vector<double> roundMs;
      for (const Candidate &candidate : contenders) {
        if (Clock::now() >= deadline) {
          complete = false;
          break;
        }
        Outcome again =
            evaluate(kernel, inputs, reference, candidate, options, deadline);
        if (again.kind != Outcome::Measured) {
          complete = false;
          break;
        }
        roundMs.push_back(again.ms);
      }
      if (!complete)
        break; // only whole rounds count, so every finalist has as many
      for (size_t k = 0; k < contenders.size(); ++k)
        timings[k].push_back(roundMs[k]);
    }
    auto median = [](std::vector<double> values) {
      std::sort(values.begin(), values.end());
      return values[values.size() / 2];
    };
    if (timings.front().size() > 1) {
      size_t winner = 0;
      std::vector<double> medians;
      for (const std::vector<double> &values : timings)
        medians.push_back(median(values));
      for (size_t k = 1; k < contenders.size(); ++k)
        if (medians[k] < medians[winner])
          winner = k;
      if (llvm::raw_ostream *os = progress()) {
        *os << "tune: @" << name << " confirming (medians of "
            << timings.front().size() << " timings):";
        for (size_t k = 0; k < contenders.size(); ++k)
          *os << " " << contenders[k].describe() << " "
              << formatMs(medians[k]) << " ms"
              << (k + 1 < contenders.size() ? "," : "\n");
      }
      for (size_t k = 0; k < contenders.size(); ++k)
        if (contenders[k].describe() == "default")
          result.defaultMs = medians[k];
      best = contenders[winner];
      bestMs = medians[winner];
    }
  }

  if (!best)
    return result;
  result.measured = true;
  result.best = *best;
  result.bestMs = bestMs;
  return result;
}
