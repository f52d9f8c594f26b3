// Checking that an optimised graph still computes what the original did: both run on the same
// inputs with one backend (the reference), every output compared, divergences localised.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/io/npy.h"
#include "lib/ir/graph.h"
#include "lib/runtime/backend.h"
#include "lib/runtime/compare.h"

namespace mt::passes {

// Tolerance on max |optimised - original| for a tensor whose original values span `range`
// (max - min) when the caller gives no absolute one: kRelativeTolerance * range + kToleranceFloor.
inline constexpr double kRelativeTolerance = 1e-4;
inline constexpr double kToleranceFloor = 1e-6;

// One input per graph input, in graph order: `given` data (by input name; its dtype and shape
// must match the graph's) or else seeded pseudo-random values: for float inputs of rank 4 (NCHW
// images) smooth planes (bilinearly interpolated 8 x 8 standard normal grids plus 0.1 white
// noise), for other floats standard normal values, 0/1 for integer and bool inputs. An unknown
// name in `given` is a usage error listing the inputs.
std::vector<HostArray> verification_inputs(const Graph& graph, const std::map<std::string, HostArray>& given,
                                           uint64_t seed);

// A tensor whose values moved beyond tolerance.
struct Divergence {
  std::string tensor;
  Shape shape;
  Comparison comparison;
  double tolerance = 0;
  std::string describe() const;  // "'logits' max abs error 0.31 > 0.0004 at [0, 7] (expected range [-5.1, 6.2])"
};

struct VerifyResult {
  size_t outputs_compared = 0;
  double worst_output_error = 0;             // max abs error over all outputs (relative to tolerance: below)
  std::optional<Divergence> output;          // the first graph output beyond tolerance
  std::optional<Divergence> first_tensor;    // the first tensor of both graphs beyond tolerance, in original order
  bool ok() const { return !output; }
  std::string message() const;  // one line naming both, for errors
};

// The original graph's results on fixed inputs, against which candidates are checked.
class Verifier {
 public:
  // atol < 0: the range-relative tolerance above. Runs `original` once.
  Verifier(const Graph& original, const Backend& backend, std::vector<HostArray> inputs, double atol);

  // Runs `candidate` (same inputs and outputs as the original) and compares every output; when
  // one diverges, runs both again returning every tensor they share to find the first that does.
  VerifyResult check(const Graph& candidate) const;

 private:
  Graph original_;
  const Backend& backend_;
  std::vector<HostArray> inputs_;
  double atol_;
  std::vector<std::vector<double>> expected_;  // the original's outputs
};

}  // namespace mt::passes
