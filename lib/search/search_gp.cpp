// Gaussian-process search ("gp"): a random start of 8 configs, then each
// proposal is the unmeasured config of the highest expected improvement
// under a Gaussian process fitted to every measurement so far
// (search_gp_model.hpp): log time, clipped at the median of the configs
// that ran, a failed config counting as 0.5 (in log units, 1.65x) above
// that: a failing region is learnt and avoided as worse than a slow one.
//
// Where it differs from bayes (search_bayes.cpp, a random forest): the
// process predicts a config from every measured config that shares values
// with it, so what it learns about one parameter's value carries over to
// every combination of the others. On the recorded convolution spaces that
// finds a lone optimum sooner (A100: the exact best within 2% of the space
// in about half of the seeds, where the forest finds it in a third); where
// the best configs sit in one corner of ordered axes the forest's threshold
// splits do as well or better (docs/autotuning.md has the numbers).
//
// A round of several proposals is chosen one at a time: after each pick the
// process is told the pick's predicted time as if measured (the "kriging
// believer"), which shrinks its uncertainty there, so the next pick looks
// elsewhere instead of next door.
//
// Each parameter of more than one value is a code (its value); a positive
// integer parameter of more than two values adds two more, whether the value
// is a power of two and the power of two dividing it (GPU kernels care about
// alignment: 96 threads is not 64 or 128), and an integer parameter of more
// than two values is also a coordinate, its position along its list.
// hybrid's search of whole-warp blocks leaves the two out
// (search_hybrid.cpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <span>
#include <unordered_set>

#include "kiln/search/search.hpp"
#include "search/internal/search_gp_model.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln {
namespace {

using internal::CategoricalGp;
using internal::GpRow;

constexpr std::size_t kGpStart = 8;          // random configs before the first fit
constexpr std::size_t kSolvedLimit = 64;     // exact posteriors per pick, at most
constexpr std::size_t kCandidates = 16384;   // configs scored per pick, at most
constexpr std::size_t kNeighboursOf = 4;     // a sampled pick also scores the neighbours of
                                             // the fastest few measured configs
constexpr double kFailurePenalty = 0.5;      // log units above the median that ran
constexpr std::size_t kRefitGrowth = 16;     // hyperparameters again once data grew 1/16
constexpr std::size_t kEpochTries = 64;      // cartesian indices drawn per epoch candidate
constexpr std::size_t kBoundBatch = 32;      // candidates bounded together (bounds_from)
constexpr std::size_t kKeptLimit = 1 << 25;  // doubles kept per config and measured row, at
                                             // most (256 MiB each for kernels and solves)

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

class GpSearch final : public internal::BudgetedSearch {
 public:
  // `random_start`: configs drawn at random before the first fit (kGpStart
  // alone; none where another strategy measured the first ones, hybrid's).
  explicit GpSearch(const SearchSetup& setup, std::size_t random_start = kGpStart,
                    internal::GpBounds bounds = {}, bool alignment_codes = true)
      : BudgetedSearch(setup, random_start),
        bounds_(bounds),
        encoder_(*setup.space, alignment_codes) {
    if (setup.space->cartesian_size() <= bounds_.pool)
      for (Config& c : setup.space->enumerate()) pool_.push_back(std::move(c));
    for (const Config& c : pool_) {
      pool_rows_.push_back(encoder_.encode(c));
      pool_index_.push_back(sampler().index(c));
    }
    // Kernel values and solves are kept per listed config (cache_, solved_)
    // when each pick scores them all, or when keeping them for the whole
    // budget fits kKeptLimit: a pick then scores its candidates in n
    // multiply-adds each instead of n kernels and an n^2 solve. Without
    // them, a 10% budget of the hub's 17,956-config GEMM space took over 9
    // minutes a seed; with them, docs/benchmarks.md ("The search's own
    // cost"). A larger budget of a larger space computes them afresh.
    const std::size_t rows_at_most =
        setup.max_configs == 0 ? pool_.size() : std::min(setup.max_configs, pool_.size());
    if (!pool_.empty() &&
        (pool_.size() <= kCandidates || pool_.size() * rows_at_most <= kKeptLimit)) {
      cache_.resize(pool_.size());
      solved_.resize(pool_.size());
    } else {
      // Candidates in epochs (draw_epoch()), and a model bounded at half
      // the rows: a pick's cost grows with rows times candidates, and its
      // conditioning with rows squared, and a space this large is searched
      // longer (10% of the hub's hotspot is 10,541 configs).
      sampled_ = true;
      bounds_.from /= 2, bounds_.best /= 2, bounds_.spread /= 2, bounds_.recent /= 2;
      bounds_.epoch /= 2;
    }
    // Within the limit, each config's room for the whole budget at once: a
    // vector grown by doubling would hold up to twice that.
    if (pool_.size() * rows_at_most <= kKeptLimit) kept_rows_ = rows_at_most;
  }
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
  };

  std::vector<Config> propose(std::size_t n) override {
    std::vector<Config> out;
    if (ok_ < 2) return out;  // nothing to learn a speed from yet: random draws
    if (measured_.size() > bounds_.from &&
        (!bounded_ ||
         rows_.size() >= bounds_.best + bounds_.spread + bounds_.recent + bounds_.epoch))
      rebase();
    else if (sampled_ && !bounded_ &&
             (!epoch_drawn_ || measured_.size() >= epoch_at_ + bounds_.renew))
      draw_epoch(bounds_.renew);
    std::vector<GpRow> rows = rows_;
    std::vector<double> y = targets();
    if (!fitted_ || (!bounded_ && rows.size() >= fitted_at_ + refit_after())) {
      gp_.fit(rows, y);
      fitted_ = true;
      fitted_at_ = rows.size();
    } else {
      gp_.condition(rows, y);
    }
    if (gp_.hyper().theta != cached_.theta || gp_.hyper().lambda != cached_.lambda) {
      for (std::vector<double>& k : cache_) k.clear();  // kernel values of other hyperparameters
      cached_ = gp_.hyper();
    }
    // Proposed earlier and not measured yet (configs in flight, when the
    // driver asks for one config as each result lands): believed at their
    // predicted times, as the picks below, so the next pick is not their
    // twin (docs/benchmarks.md, "Proposals without rounds").
    for (const Config& c : pending_) {
      const GpRow row = encoder_.encode(c);
      const double mean = gp_.predict(row).mean;
      rows.push_back(row);
      y.push_back(gp_.to_y(mean));
      gp_.condition(rows, y);
    }
    std::vector<Candidate> candidates = unmeasured();
    std::vector<bool> picked(candidates.size(), false);
    while (out.size() < n) {
      const auto [i, mean] = best_candidate(candidates, picked, rows);
      if (i == kNone) break;
      picked[i] = true;
      if (!sampler().mark(*candidates[i].config)) continue;  // drawn twice into a sample
      out.push_back(*candidates[i].config);
      pending_.push_back(*candidates[i].config);
      if (out.size() == n) break;
      // The believer: the pick's predicted time, as if measured.
      rows.push_back(*candidates[i].row);
      y.push_back(gp_.to_y(mean));
      gp_.condition(rows, y);
    }
    return out;
  }

  // New measurements before the hyperparameters are chosen again: a
  // sixteenth of those fitted (in between, the last choice conditions on
  // them: a row costs n^2 there, against the grid's dozens of factors).
  std::size_t refit_after() const { return std::max<std::size_t>(1, fitted_at_ / kRefitGrowth); }

  // Log times, every one slower than the median of those that ran clipped
  // to it, and a failure the penalty above that median: the model is
  // there to say where the fast configs are, and a slow half that varies
  // tenfold would otherwise decide its fit. Where a parameter's value is
  // slow on average but holds the optimum (no shared memory on the A4000
  // convolution: median 0.25 of the optimum, best 1.0), log times mark it
  // bad; clipped, its fast corner shows (docs/benchmarks.md: A4000 at 2%,
  // seeds reaching 0.95 0.40 -> 0.70-0.84).
  // The median is of every config that ran, in the model or not.
  std::vector<double> targets() const {
    std::vector<double> ran;
    for (double v : log_seconds_)
      if (v != kFailed) ran.push_back(v);
    const auto middle = ran.begin() + static_cast<std::ptrdiff_t>(ran.size() / 2);
    std::nth_element(ran.begin(), middle, ran.end());
    std::vector<double> y;
    for (std::size_t i : model_at_) {
      const double v = log_seconds_[i];
      y.push_back(v == kFailed ? *middle + kFailurePenalty : std::min(v, *middle));
    }
    return y;
  }

  // NOTES: the bounded model. An exact process over every measured row
  // costs n^2 per candidate's solve and n^3 per refit, and with 16,384
  // candidates a pick, each needing n kernel values, a 10% budget of a
  // 100,000-config space (the hub's hotspot) ran for hours (docs/
  // benchmarks.md, "The search's own cost"). Past bounds_.from measured
  // configs (GpBounds), the model conditions on a base of at most best +
  // spread + recent of them, rebased each `epoch` measurements:
  //  - the fastest, which is where expected improvement is decided (the
  //    targets clip everything slower than the median anyway);
  //  - others spread evenly over the run in report order, failures
  //    included, so regions measured slow or failing early stay known;
  //  - the latest, around where the search is now.
  // Measurements of an epoch are appended to its base, so within one the
  // factor grows by rows (n^2 each) and the hyperparameters stay; they are
  // chosen again at each rebase. The candidates of an epoch are also fixed
  // (bounds_.candidates unmeasured configs, drawn afresh at each rebase, plus
  // each pick's neighbours of the fastest), so their kernel values and
  // solves are kept as a small listed space's are, and a pick costs
  // candidates x rows multiply-adds, whatever the space's size. Every
  // measured config is still remembered (the sampler excludes it from
  // proposals; the neighbours and the median use them all). The default
  // `from`, 2,048, is past every run measured so far (up to 1,796 configs),
  // which pick as before, bit for bit.
  void rebase() {
    const std::size_t n = measured_.size();
    std::vector<std::size_t> ran;
    for (std::size_t i = 0; i < n; ++i)
      if (log_seconds_[i] != kFailed) ran.push_back(i);
    const std::vector<std::size_t> base = internal::bounded_rows(
        n, std::move(ran),
        [&](std::size_t a, std::size_t b) {
          return log_seconds_[a] != log_seconds_[b] ? log_seconds_[a] < log_seconds_[b] : a < b;
        },
        bounds_.best, bounds_.spread, bounds_.recent);
    rows_.clear();
    flat_.clear();
    for (std::size_t i : base) add_row(encoder_.encode(measured_[i]));
    model_at_ = base;
    bounded_ = true;
    fitted_ = false;  // hyperparameters for the new base, at this pick
    draw_epoch(bounds_.epoch);
  }

  // NOTES: candidates in epochs. A pick scores each candidate against every
  // row conditioned on. Where the space is too large to keep those values
  // for all its configs (sampled_), a pick used to draw its own thousands
  // of candidates and compute each one's values afresh: candidates x rows
  // kernels a pick, n^2 solves for the most promising, and a 1% budget of
  // the 105,412-config hotspot space took 144 s a seed, 10% over ten
  // minutes (docs/benchmarks.md, "Candidates in epochs"). Instead the
  // candidates are drawn once per epoch (bounds_.drawn unmeasured configs
  // before the bound, bounds_.candidates past it, plus each pick's
  // neighbours of the fastest), and their kernel values and solves are
  // kept and extended row by row, as a listed space's are: a pick costs
  // candidates x rows multiply-adds. An epoch lasts bounds_.renew
  // measurements before the bound and bounds_.epoch past it. Fresh draws
  // keep the search looking across the space: renewed every 32, 8,192
  // candidates fixed for 32 picks found less late in a run than about
  // 1,500 fresh ones a pick had; every 8, as much.
  void draw_epoch(std::size_t lasts) {
    epoch_drawn_ = true;
    epoch_at_ = measured_.size();
    epoch_.clear();
    epoch_rows_.clear();
    epoch_index_.clear();
    if (!pool_.empty()) {
      std::vector<std::size_t> open;
      for (std::size_t i = 0; i < pool_.size(); ++i)
        if (!sampler().taken_at(pool_index_[i])) open.push_back(i);
      std::shuffle(open.begin(), open.end(), sampler().rng());
      if (open.size() > cands()) open.resize(cands());
      for (std::size_t i : open) {
        epoch_.push_back(pool_[i]);
        epoch_rows_.push_back(pool_rows_[i]);
        epoch_index_.push_back(pool_index_[i]);
      }
    } else if (const std::vector<Config>* listed = sampler().listed(); listed && !listed->empty()) {
      // Uniform over the space's configs, as a draw by cartesian index is,
      // without asking the space which indices it holds.
      std::uniform_int_distribution<std::size_t> pick(0, listed->size() - 1);
      std::unordered_set<std::uint64_t> drawn;
      for (std::size_t tries = 0; tries < kEpochTries * cands() && epoch_.size() < cands();
           ++tries) {
        const std::size_t i = pick(sampler().rng());
        const std::uint64_t at = sampler().listed_index(i);
        if (sampler().taken_at(at) || !drawn.insert(at).second) continue;
        epoch_.push_back((*listed)[i]);
        epoch_rows_.push_back(encoder_.encode_at(at));
        epoch_index_.push_back(at);
      }
    } else {
      const ConfigSpace& space = sampler().space();
      std::uniform_int_distribution<std::uint64_t> pick(0, space.cartesian_size() - 1);
      std::unordered_set<std::uint64_t> drawn;
      // Drawn once an epoch, so more tries than a pick's draw: in the hub's
      // hotspot space 2.4% of the cartesian indices are configs.
      for (std::size_t tries = 0; tries < kEpochTries * cands() && epoch_.size() < cands();
           ++tries) {
        const std::uint64_t at = pick(sampler().rng());
        // Cheapest first: most indices are not configs, and the set holds
        // only the few thousand accepted.
        if (!member(at) || sampler().taken_at(at) || !drawn.insert(at).second) continue;
        epoch_.push_back(space.config_at(at));
        epoch_rows_.push_back(encoder_.encode_at(at));
        epoch_index_.push_back(at);
      }
    }
    epoch_known_ = {epoch_index_.begin(), epoch_index_.end()};
    // Values kept against the old base are of other rows: dropped (and the
    // pool's, which a bounded run no longer reads, freed).
    cache_.assign(epoch_.size(), {});
    solved_.assign(epoch_.size(), {});
    kept_rows_ = rows_.size() + lasts;
    cached_ = solved_hyper_ = internal::GpHyper{-1, -1, -1};
  }

  // The unpicked candidate of the highest expected improvement, and its
  // posterior mean. Exact, but the posterior's solve (n^2 per candidate)
  // runs only where it can matter: expected improvement rises with the
  // sd, so a candidate whose improvement at its sd's upper bound is below
  // the best found cannot win. Late in a long run, where every candidate
  // has measured neighbours and the bound is loose, the solves stop at
  // kSolvedLimit candidates: the best of the most promising bounds.
  std::pair<std::size_t, double> best_candidate(std::vector<Candidate>& candidates,
                                                const std::vector<bool>& picked,
                                                const std::vector<GpRow>& rows) {
    std::vector<std::pair<double, std::size_t>> bound;
    std::vector<double> means(candidates.size()), scratch, tail;
    {
      // The bounds a batch at a time (CategoricalGp::bounds_from), each
      // candidate's values in its own buffers while the batch lasts.
      std::vector<std::vector<double>> scratches(kBoundBatch), tails(kBoundBatch);
      std::vector<std::span<const double>> heads, tail_spans;
      std::vector<std::size_t> ids;
      std::vector<CategoricalGp::Posterior> bounds(kBoundBatch);
      const auto flush = [&] {
        gp_.bounds_from(heads, tail_spans, bounds.data());
        for (std::size_t k = 0; k < ids.size(); ++k) {
          means[ids[k]] = bounds[k].mean;
          bound.push_back({gp_.expected_improvement(bounds[k].mean, bounds[k].sd), ids[k]});
        }
        heads.clear();
        tail_spans.clear();
        ids.clear();
      };
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (picked[i]) continue;
        const std::size_t k = ids.size();
        heads.push_back(kernel_values(candidates[i], rows, scratches[k], tails[k]));
        tail_spans.push_back(tails[k]);
        ids.push_back(i);
        if (ids.size() == kBoundBatch) flush();
      }
      flush();
    }
    std::stable_sort(bound.begin(), bound.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::size_t best = kNone;
    double best_ei = -1;
    std::size_t solved = 0;
    for (const auto& [upper, i] : bound) {
      if (upper <= best_ei || ++solved > kSolvedLimit) break;
      const std::span<const double> head = kernel_values(candidates[i], rows, scratch, tail);
      std::vector<double> k(head.begin(), head.end());
      k.insert(k.end(), tail.begin(), tail.end());
      const CategoricalGp::Posterior p = exact(candidates[i], k);
      const double ei = gp_.expected_improvement(p.mean, p.sd);
      if (ei > best_ei) {
        best_ei = ei;
        best = i;
      }
    }
    return {best, best == kNone ? 0.0 : means[best]};
  }

  // The exact posterior of a candidate from its kernel values `k` against
  // the rows conditioned on. The solve against the measured rows is kept
  // for a listed space's configs, as their kernel values are, while the
  // hyperparameters (the noise too: it is in the factor) stay: measured
  // rows keep their factor rows (CategoricalGp::condition), so a kept solve
  // is extended by the rows measured since (n each) instead of redone
  // (n^2), the cost of a long run's picks.
  CategoricalGp::Posterior exact(const Candidate& c, std::span<const double> k) {
    std::vector<double> v;
    if (c.kept != kNone && !solved_.empty()) {
      const internal::GpHyper& h = gp_.hyper();
      if (h != solved_hyper_) {
        for (std::vector<double>& kept : solved_) kept.clear();
        solved_hyper_ = h;
      }
      std::vector<double>& kept = solved_[c.kept];
      kept.reserve(kept_rows_);
      gp_.solve_more(k.first(rows_.size()), kept);
      v = kept;
    }
    gp_.solve_more(k, v);  // this pick's believed rows
    return gp_.predict_solved(k, v);
  }

  // A row of the model, in rows_ and in flat_ alike.
  void add_row(GpRow row) {
    flat_.push_back(row);
    rows_.push_back(std::move(row));
  }

  // A candidate's kernel values against `rows` (the measured rows_, then
  // this round's believed picks): those against rows_ returned (kept
  // between picks and rounds for a listed space, in cache_, while the
  // hyperparameters stay: a pick then costs multiply-adds, not kernels;
  // else computed into `scratch`), those against the believed picks into
  // `tail`.
  std::span<const double> kernel_values(const Candidate& c, const std::vector<GpRow>& rows,
                                        std::vector<double>& scratch, std::vector<double>& tail) {
    // Sized, then written in place: a push_back per value stayed a call in a
    // sanitizer build (where the linker may keep an -O0 copy of it) and was
    // a quarter of a sampled space's search under ASan.
    tail.resize(rows.size() - rows_.size());
    for (std::size_t j = rows_.size(); j < rows.size(); ++j)
      tail[j - rows_.size()] = gp_.covariance(*c.row, rows[j]);
    if (c.kept != kNone && !cache_.empty()) {
      std::vector<double>& kept = cache_[c.kept];
      kept.reserve(kept_rows_);
      const std::size_t had = kept.size();
      if (had < rows_.size()) {
        kept.resize(rows_.size());
        gp_.covariances(*c.row, flat_, had, rows_.size(), kept.data() + had);
      }
      return {kept.data(), rows_.size()};
    }
    scratch.resize(rows_.size());
    gp_.covariances(*c.row, flat_, 0, rows_.size(), scratch.data());
    return scratch;
  }

  // The configs a pick is chosen from: every unmeasured one of a listed
  // space whose values are kept, up to kCandidates of them drawn at random
  // plus the unmeasured one-parameter neighbours of the fastest few
  // measured (in drawn_ until the next call), or an epoch's (draw_epoch()).
  std::vector<Candidate> unmeasured() {
    std::vector<Candidate> out;
    drawn_.clear();
    drawn_rows_.clear();
    if (bounded_ || sampled_) {
      // The neighbours join the epoch's candidates, their values kept too:
      // near the best, they are most of a pick's exact solves.
      for (Config& c : fastest_neighbours()) {
        const std::uint64_t at = sampler().index(c);
        if (!epoch_known_.insert(at).second) continue;
        epoch_rows_.push_back(encoder_.encode(c));
        epoch_.push_back(std::move(c));
        epoch_index_.push_back(at);
        cache_.emplace_back();
        solved_.emplace_back();
      }
      for (std::size_t i = 0; i < epoch_.size(); ++i)
        if (!sampler().taken_at(epoch_index_[i])) out.push_back({&epoch_[i], &epoch_rows_[i], i});
      return out;
    }
    for (std::size_t i = 0; i < pool_.size(); ++i)
      if (!sampler().taken_at(pool_index_[i])) out.push_back({&pool_[i], &pool_rows_[i], i});
    if (out.size() <= kCandidates) return out;
    std::shuffle(out.begin(), out.end(), sampler().rng());
    out.resize(kCandidates);
    // Where a random draw from a large space seldom lands.
    for (Config& c : fastest_neighbours()) {
      drawn_rows_.push_back(encoder_.encode(c));
      drawn_.push_back(std::move(c));
    }
    for (std::size_t j = 0; j < drawn_.size(); ++j)
      out.push_back({&drawn_[j], &drawn_rows_[j], kNone});
    return out;
  }

  // The untaken one-parameter neighbours of the kNeighboursOf fastest
  // measured configs.
  std::vector<Config> fastest_neighbours() {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < log_seconds_.size(); ++i)
      if (log_seconds_[i] != kFailed) order.push_back(i);
    const std::size_t few = std::min<std::size_t>(kNeighboursOf, order.size());
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(few), order.end(),
        [&](std::size_t a, std::size_t b) { return log_seconds_[a] < log_seconds_[b]; });
    std::vector<Config> out;
    for (std::size_t k = 0; k < few; ++k)
      for (Config& c : internal::untaken_neighbours(sampler(), measured_[order[k]]))
        out.push_back(std::move(c));
    return out;
  }

  // An epoch's candidates, at most.
  std::size_t cands() const { return bounded_ ? bounds_.candidates : bounds_.drawn; }

  // Whether the space holds the config at `at` of the cartesian product.
  // violated() is asked once per index: a recorded space's check builds the
  // config's key and looks it up, and an epoch in a sparse space (the hub's
  // hotspot: 2.4% of its cartesian product) draws hundreds of thousands of
  // indices, so that was most of its time.
  bool member(std::uint64_t at) {
    const ConfigSpace& space = sampler().space();
    if (member_.empty() && space.cartesian_size() <= kMemberLimit)
      member_.assign(space.cartesian_size(), kUnknown);
    std::uint8_t unknown = kUnknown;
    std::uint8_t& known = member_.empty() ? unknown : member_[at];
    if (known == kUnknown) known = space.violated(space.config_at(at)).empty() ? kIn : kOut;
    return known == kIn;
  }

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
  std::vector<std::vector<double>> cache_;
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
};

}  // namespace

namespace internal {

SearchStrategyInfo gp_strategy() {
  return steered_strategy<GpSearch>(
      "gp",
      "a Gaussian process over parameter values (shared values and trends along ordered axes) "
      "fitted to every measurement, failures included, proposes the configs of the highest "
      "expected improvement; finds a lone optimum sooner than bayes on the recorded GPU spaces",
      64);
}

std::unique_ptr<SearchStrategy> make_gp_search(const SearchSetup& setup, std::size_t random_start,
                                               GpBounds bounds, bool alignment_codes) {
  const std::optional<std::size_t> budget = proposal_budget(setup);
  if (!budget) return std::make_unique<SpentSearch>("gp");
  SearchSetup s = setup;
  s.max_configs = *budget;
  return std::make_unique<GpSearch>(s, random_start, bounds, alignment_codes);
}

std::size_t gp_model_rows(const SearchStrategy& gp) {
  const auto* g = dynamic_cast<const GpSearch*>(&gp);
  return g ? g->model_rows() : 0;
}

}  // namespace internal
}  // namespace kiln
