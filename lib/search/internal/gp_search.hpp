// gp's search, shared by its two files: how a config becomes a row of the
// Gaussian process (RowEncoder), and the strategy's state (GpSearch). The
// picks and the model are in search_gp.cpp; the candidates a pick is
// chosen from in gp_candidates.cpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kiln/search/search.hpp"
#include "search/internal/search_gp_model.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln::internal {

// An allocator whose resize() leaves new doubles unwritten: a candidate's
// kept kernel values are cleared at each refit and grown again by the
// hundreds, each written by covariances() at once, and the zero fill
// before it was a twelfth of a long search's time (measured:
// docs/lab/search-cost-journal.md, "The picks' bookkeeping").
template <class T>
struct UnfilledAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnfilledAllocator<U>;
  };
  UnfilledAllocator() = default;
  template <class U>
  UnfilledAllocator(const UnfilledAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using UnfilledDoubles = std::vector<double, UnfilledAllocator<double>>;

constexpr std::size_t kGpStart = 8;          // random configs before the first fit
constexpr std::size_t kSolvedLimit = 64;     // exact posteriors per pick, at most
constexpr std::size_t kCandidates = 16384;   // configs scored per pick, at most
constexpr std::size_t kNeighboursOf = 4;     // a sampled pick also scores the neighbours of
                                             // the fastest few measured configs
constexpr double kFailurePenalty = 0.5;      // log units above the median that ran
constexpr std::size_t kRefitGrowth = 16;     // hyperparameters again once data grew 1/16
constexpr std::size_t kEpochTries = 64;      // cartesian indices drawn per epoch candidate
constexpr std::size_t kBoundBatch = 32;      // candidates bounded together (bounds_from)
constexpr double kPriorEvidence = 4;         // the prior's scale shrinks by 4 / t^2 (prior_slope)
constexpr std::size_t kKeptLimit = 1 << 25;  // doubles kept per config and measured row, at
                                             // most (256 MiB each for kernels and solves)

// The least-squares slope of `y` on `p` (one of each per measured row,
// with an intercept), times max(0, 1 - evidence / t^2), t the slope's t
// statistic: a slope the rows do not tell from 0 (t^2 <= evidence) is 0,
// a sure one is nearly whole. 0 where it would be negative, for fewer than
// 3 rows or a constant `p`: how far this device's times follow other
// devices' (GpSearch::subtract_prior).
double prior_slope(std::span<const double> p, std::span<const double> y, double evidence);

// Each parameter of more than one value is a code (its value); a positive
// integer parameter of more than two values adds two more, whether the value
// is a power of two and the power of two dividing it (GPU kernels care about
// alignment: 96 threads is not 64 or 128), and an integer parameter of more
// than two values is also a coordinate, its position along its list.
// hybrid's search of whole-warp blocks leaves the two out
// (search_hybrid.cpp).
class RowEncoder {
 public:
  explicit RowEncoder(const ConfigSpace& space, bool alignment_codes = true) {
    for (const Parameter& p : space.parameters()) {
      const std::size_t slot = sizes_.size();
      sizes_.push_back(p.values.size());
      if (p.values.size() < 2) continue;  // a constant tells the model nothing
      Axis a{&p, slot};
      if (p.type == ValueType::kInt && p.values.size() > 2) {
        a.coord = true;
        a.alignment = alignment_codes &&
                      std::all_of(p.values.begin(), p.values.end(),
                                  [](const Value& v) { return std::get<std::int64_t>(v) > 0; });
      }
      axes_.push_back(a);
    }
  }

  GpRow encode(const Config& c) const {
    GpRow r;
    for (const Axis& a : axes_) {
      const Value& v = c.at(a.param->name);
      add(r, a,
          static_cast<std::size_t>(std::find(a.param->values.begin(), a.param->values.end(), v) -
                                   a.param->values.begin()));
    }
    return r;
  }

  // The same for the config at `index` of the cartesian product
  // (ConfigSpace::config_at()), from its digits: no name lookups, for a
  // sampled space's thousands of candidates per pick.
  GpRow encode_at(std::uint64_t index) const {
    std::vector<std::size_t> digits(sizes_.size());
    for (std::size_t p = sizes_.size(); p-- > 0;) {  // the last parameter varies fastest
      digits[p] = static_cast<std::size_t>(index % sizes_[p]);
      index /= sizes_[p];
    }
    GpRow r;
    for (const Axis& a : axes_) add(r, a, digits[a.slot]);
    return r;
  }

 private:
  struct Axis {
    const Parameter* param = nullptr;
    std::size_t slot = 0;  // its place among the space's parameters
    bool coord = false, alignment = false;
  };

  // Axis `a`'s codes and coordinate for its value at position `at`.
  static void add(GpRow& r, const Axis& a, std::size_t at) {
    r.codes.push_back(static_cast<std::int32_t>(at));
    if (a.alignment) {
      const auto u = static_cast<std::uint64_t>(std::get<std::int64_t>(a.param->values[at]));
      r.codes.push_back(std::has_single_bit(u) ? 1 : 0);
      r.codes.push_back(std::countr_zero(u));
    }
    if (a.coord)
      r.coords.push_back(static_cast<double>(at) / static_cast<double>(a.param->values.size() - 1));
  }

  std::vector<std::uint64_t> sizes_;  // each parameter's number of values
  std::vector<Axis> axes_;
};

// The "gp" strategy. Its picks and model are in search_gp.cpp, the
// candidates a pick is chosen from in gp_candidates.cpp.
class GpSearch final : public BudgetedSearch {
 public:
  // `random_start`: configs drawn at random before the first fit (kGpStart
  // alone; none where another strategy measured the first ones, hybrid's).
  explicit GpSearch(const SearchSetup& setup, std::size_t random_start = kGpStart,
                    internal::GpBounds bounds = {}, bool alignment_codes = true);
  const char* name() const override { return "gp"; }

  void report(const Config& config, std::optional<double> seconds) override {
    // Taken, should another strategy have proposed it (hybrid's opening).
    sampler().mark(config);
    const bool ok = seconds && *seconds > 0 && std::isfinite(*seconds);
    ok_ += ok;
    std::erase(pending_, config);
    add_row(encoder_.encode(config));
    model_at_.push_back(measured_.size());
    measured_.push_back(config);
    log_seconds_.push_back(ok ? std::log(*seconds) : kFailed);
    if (prior_) prior_of_.push_back(prior_->at(config));
  }

  // Measured rows in the model: every one up to bounds_.from, then a
  // rebased subset (rebase()).
  std::size_t model_rows() const { return rows_.size(); }

 private:
  static constexpr double kFailed = -1e300;  // a marker: replaced in targets()
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  // A config a pick is chosen from, in pool_, epoch_ or in this pick's
  // drawn_: pointers, since a listed space's thousands are asked of at
  // every pick.
  struct Candidate {
    const Config* config;
    const GpRow* row;
    std::size_t kept;  // its slot in cache_ and solved_ (pool_'s or epoch_'s), kNone when drawn
    double prior = 0;  // prior_->at(*config); 0 without a prior
  };

  std::vector<Config> propose(std::size_t n) override;

  // New measurements before the hyperparameters are chosen again: a
  // sixteenth of those fitted (in between, the last choice conditions on
  // them: a row costs n^2 there, against the grid's dozens of factors).
  std::size_t refit_after() const { return std::max<std::size_t>(1, fitted_at_ / kRefitGrowth); }

  // Log times, every one slower than the median of those that ran clipped
  // to it, and a failure the penalty above that median: the model is
  // there to say where the fast configs are, and a slow half that varies
  // tenfold would otherwise decide its fit. Where a parameter's value is
  // slow on average but holds the optimum (no shared memory on the A4000
  // convolution: slow at its median, yet the optimum), log times mark it
  // bad; clipped, its fast corner shows (measured:
  // docs/lab/search-models-journal.md, "The gp strategy", the target
  // transforms).
  // The median is of every config that ran, in the model or not.
  std::vector<double> targets() const;

  // The prior from other devices (SearchSetup::prior): `y` (targets())
  // less its fitted share, prior_scale_ times each row's score; `shift`
  // gets those shares. The gp is fitted to what is left, and a config's
  // expected improvement adds its own share back (search_gp.cpp says why).
  void subtract_prior(std::vector<double>& y, std::vector<double>& shift);
  // Expected improvement is measured from the lowest target, y + shift.
  void measure_from_best(const std::vector<double>& y, const std::vector<double>& shift);
  // A candidate's share of the prior, in the gp's standardised units.
  double lift(const Candidate& c) const {
    return prior_ ? prior_scale_ * c.prior / gp_.scale() : 0.0;
  }
  double prior_at(const Config& c) const { return prior_ ? prior_->at(c) : 0.0; }

  // Past bounds_.from measured: a new base of the model, and its epoch
  // (search_gp.cpp says why).
  void rebase();

  // The candidates for the next `lasts` measurements (gp_candidates.cpp
  // says why in epochs).
  void draw_epoch(std::size_t lasts);

  // The unpicked candidate of the highest expected improvement, and its
  // posterior mean. Exact, but the posterior's solve (n^2 per candidate)
  // runs only where it can matter: expected improvement rises with the
  // sd, so a candidate whose improvement at its sd's upper bound is below
  // the best found cannot win. Late in a long run, where every candidate
  // has measured neighbours and the bound is loose, the solves stop at
  // kSolvedLimit candidates: the best of the most promising bounds.
  std::pair<std::size_t, double> best_candidate(std::vector<Candidate>& candidates,
                                                const std::vector<bool>& picked,
                                                const std::vector<GpRow>& rows);

  // The exact posterior of a candidate from its kernel values `k` against
  // the rows conditioned on. The solve against the measured rows is kept
  // for a listed space's configs, as their kernel values are, while the
  // hyperparameters (the noise too: it is in the factor) stay: measured
  // rows keep their factor rows (CategoricalGp::condition), so a kept solve
  // is extended by the rows measured since (n each) instead of redone
  // (n^2), the cost of a long run's picks.
  CategoricalGp::Posterior exact(const Candidate& c, std::span<const double> k);

  // A row of the model, in rows_ and in flat_ alike.
  void add_row(GpRow row) {
    flat_.push_back(row);
    rows_.push_back(std::move(row));
  }

  // A candidate's kernel values against the rows conditioned on (the
  // measured rows_, then the configs in flight and this round's believed
  // picks, `tail_rows`, laid out flat as rows_ are in flat_): those against
  // rows_ returned (kept between picks and rounds for a listed space, in
  // cache_, while the hyperparameters stay: a pick then costs
  // multiply-adds, not kernels; else computed into `scratch`), those
  // against `tail_rows` into `tail`.
  std::span<const double> kernel_values(const Candidate& c, const GpRowTable& tail_rows,
                                        UnfilledDoubles& scratch, UnfilledDoubles& tail);

  // The configs a pick is chosen from: every unmeasured one of a listed
  // space whose values are kept, up to kCandidates of them drawn at random
  // plus the unmeasured one-parameter neighbours of the fastest few
  // measured (in drawn_ until the next call), or an epoch's (draw_epoch()).
  std::vector<Candidate> unmeasured();

  // The untaken one-parameter neighbours of the kNeighboursOf fastest
  // measured configs.
  std::vector<Config> fastest_neighbours();

  // An epoch's candidates, at most.
  std::size_t cands() const { return bounded_ ? bounds_.candidates : bounds_.drawn; }

  // Whether the space holds the config at `at` of the cartesian product.
  // violated() is asked once per index: a recorded space's check builds the
  // config's key and looks it up, and an epoch in a sparse space (the hub's
  // hotspot: 2.4% of its cartesian product) draws hundreds of thousands of
  // indices, so that was most of its time.
  bool member(std::uint64_t at);

  static constexpr std::uint8_t kUnknown = 0, kIn = 1, kOut = 2;
  static constexpr std::uint64_t kMemberLimit = 1 << 26;  // cartesian configs: 64 MiB

  internal::GpBounds bounds_;
  RowEncoder encoder_;
  std::vector<std::uint8_t> member_;  // kUnknown, kIn or kOut per cartesian index, once drawn
  std::vector<Config> pool_;          // every config, when the space can be listed
  std::vector<GpRow> pool_rows_;
  std::vector<std::uint64_t> pool_index_;  // each one's UniqueSampler::index()
  std::vector<Config> drawn_;              // this pick's candidates outside pool_
  std::vector<GpRow> drawn_rows_;
  // A bounded model's epoch (rebase()), or a sampled space's (draw_epoch()):
  // its candidates, kept as pool_'s are.
  bool bounded_ = false;
  bool sampled_ = false;      // too large to keep values for each config: epochs from the start
  bool epoch_drawn_ = false;  // once, before the bound
  std::size_t epoch_at_ = 0;  // measured_.size() when the epoch was drawn
  std::vector<Config> epoch_;
  std::vector<GpRow> epoch_rows_;
  std::vector<std::uint64_t> epoch_index_;
  std::unordered_set<std::uint64_t> epoch_known_;  // epoch_index_'s
  // Per config of a listed space (kept slots: pool_'s, or epoch_'s once
  // bounded): its kernel values against rows_ at the hyperparameters
  // cached_ (kernel_values()).
  std::vector<UnfilledDoubles> cache_;
  std::size_t kept_rows_ = 0;  // room reserved in each of cache_'s and solved_'s vectors
  internal::GpHyper cached_{-1, -1, -1};
  // The same configs' solves against rows_ at solved_hyper_ (exact()).
  std::vector<std::vector<double>> solved_;
  internal::GpHyper solved_hyper_{-1, -1, -1};
  CategoricalGp gp_;
  bool fitted_ = false;
  std::size_t fitted_at_ = 0;
  std::vector<GpRow> rows_;    // the model's rows: measured_[model_at_[i]]
  internal::GpRowTable flat_;  // rows_ again, laid out flat for kernel_values()
  std::vector<std::size_t> model_at_;
  std::vector<Config> measured_;     // in report order
  std::vector<Config> pending_;      // proposed here, not reported yet
  std::vector<double> log_seconds_;  // kFailed: failed
  std::size_t ok_ = 0;
  // Other devices' times (SearchSetup::prior; null: none), each measured
  // config's score, pool_'s and epoch_'s, and the scale last fitted.
  std::shared_ptr<const DevicePrior> prior_;
  std::vector<double> prior_of_, pool_prior_, epoch_prior_;
  double prior_scale_ = 0;
};

}  // namespace kiln::internal
