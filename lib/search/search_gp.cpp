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
// finds a lone optimum sooner than the forest does; where the best configs
// sit in one corner of ordered axes the forest's threshold splits do as
// well or better (docs/autotuning.md, "Searches", Hybrid's GP; measured:
// docs/lab/search-models-journal.md, "The gp strategy").
//
// A round of several proposals is chosen one at a time: after each pick the
// process is told the pick's predicted time as if measured (the "kriging
// believer"), which shrinks its uncertainty there, so the next pick looks
// elsewhere instead of next door.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>

#include "kiln/search/search.hpp"
#include "search/internal/gp_search.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln::internal {

GpSearch::GpSearch(const SearchSetup& setup, std::size_t random_start, internal::GpBounds bounds,
                   bool alignment_codes)
    : BudgetedSearch(setup, random_start),
      bounds_(bounds),
      encoder_(*setup.space, alignment_codes),
      prior_(setup.prior && setup.prior->devices ? setup.prior : nullptr) {
  if (setup.space->cartesian_size() <= bounds_.pool)
    for (Config& c : setup.space->enumerate()) pool_.push_back(std::move(c));
  for (const Config& c : pool_) {
    pool_rows_.push_back(encoder_.encode(c));
    pool_index_.push_back(sampler().index(c));
    if (prior_) pool_prior_.push_back(prior_->at(c));
  }
  // Kernel values and solves are kept per listed config (cache_, solved_)
  // when each pick scores them all, or when keeping them for the whole
  // budget fits kKeptLimit: a pick then scores its candidates in n
  // multiply-adds each instead of n kernels and an n^2 solve. Without
  // them, a large budget of the hub's GEMM space took minutes a seed
  // (measured with and without: docs/lab/search-cost-journal.md, "The
  // search's own cost"). A larger budget of a larger space computes them
  // afresh.
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

std::vector<Config> GpSearch::propose(std::size_t n) {
  std::vector<Config> out;
  if (ok_ < 2) return out;  // nothing to learn a speed from yet: random draws
  if (measured_.size() > bounds_.from &&
      (!bounded_ || rows_.size() >= bounds_.best + bounds_.spread + bounds_.recent + bounds_.epoch))
    rebase();
  else if (sampled_ && !bounded_ &&
           (!epoch_drawn_ || measured_.size() >= epoch_at_ + bounds_.renew))
    draw_epoch(bounds_.renew);
  std::vector<GpRow> rows = rows_;
  std::vector<double> y = targets(), shift;
  subtract_prior(y, shift);
  if (!fitted_ || (!bounded_ && rows.size() >= fitted_at_ + refit_after())) {
    gp_.fit(rows, y);
    fitted_ = true;
    fitted_at_ = rows.size();
  } else {
    gp_.condition(rows, y);
  }
  measure_from_best(y, shift);
  if (gp_.hyper().theta != cached_.theta || gp_.hyper().lambda != cached_.lambda) {
    for (UnfilledDoubles& k : cache_) k.clear();  // kernel values of other hyperparameters
    cached_ = gp_.hyper();
  }
  // Proposed earlier and not measured yet (configs in flight, when the
  // driver asks for one config as each result lands): believed at their
  // predicted times, as the picks below, so the next pick is not their
  // twin (docs/autotuning.md, "Steered searches: configs in flight or
  // rounds"; measured: docs/lab/search-journal.md, "Configs in flight:
  // proposals without a round barrier").
  for (const Config& c : pending_) {
    const GpRow row = encoder_.encode(c);
    const double mean = gp_.predict(row).mean;
    rows.push_back(row);
    y.push_back(gp_.to_y(mean));
    gp_.condition(rows, y);
    if (prior_) shift.push_back(prior_scale_ * prior_->at(c));
    measure_from_best(y, shift);
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
    if (prior_) shift.push_back(prior_scale_ * candidates[i].prior);
    measure_from_best(y, shift);
  }
  return out;
}

// NOTES: the prior from other devices. A config's log time here is
// modelled as s * p + f: p its score from other devices (DevicePrior), s
// a scale fitted to this device's measurements, f the gp over what is
// left. s is the least-squares slope of the targets on p, shrunk towards
// 0 by how sure the rows make it (kPriorEvidence, prior_slope) and never
// below 0: where the other devices' times say nothing of this one's, or
// the opposite, s falls to 0 and the search is gp's cold one; where they
// agree, a config that was fast elsewhere starts with a lower expected
// time, so it is proposed sooner, but its own measurement and its
// neighbours' decide. It only weights: every config keeps its sd, and s is
// fitted again at every pick. Measured leave-one-device-out on recorded
// spaces, it gains a little at 0.5% and 1% and costs convolution A100 its
// 2% point (its optimum is fast there alone, and the bulk of its times
// still follows the others'), so the tuner does not pass a prior by default
// (docs/lab/priors-journal.md, "A prior from other devices").
void GpSearch::subtract_prior(std::vector<double>& y, std::vector<double>& shift) {
  if (!prior_) return;
  std::vector<double> p;
  for (std::size_t i : model_at_) p.push_back(prior_of_[i]);
  prior_scale_ = internal::prior_slope(p, y, kPriorEvidence);
  for (std::size_t k = 0; k < y.size(); ++k) {
    shift.push_back(prior_scale_ * p[k]);
    y[k] -= shift.back();
  }
}

void GpSearch::measure_from_best(const std::vector<double>& y, const std::vector<double>& shift) {
  if (!prior_) return;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < y.size(); ++k) best = std::min(best, y[k] + shift[k]);
  gp_.set_best_y(best);
}

std::vector<double> GpSearch::targets() const {
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
// 100,000-config space (the hub's hotspot) ran for hours
// (docs/lab/search-cost-journal.md, "Spaces of 100,000 configs and more").
// Past bounds_.from measured
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
void GpSearch::rebase() {
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

std::pair<std::size_t, double> GpSearch::best_candidate(std::vector<Candidate>& candidates,
                                                        const std::vector<bool>& picked,
                                                        const std::vector<GpRow>& rows) {
  // The rows past rows_ (in flight, believed), flat: each candidate's
  // values against them are computed afresh at every pick.
  GpRowTable tail_rows;
  for (std::size_t j = rows_.size(); j < rows.size(); ++j) tail_rows.push_back(rows[j]);
  std::vector<std::pair<double, std::size_t>> bound;
  bound.reserve(candidates.size());
  std::vector<double> means(candidates.size());
  UnfilledDoubles scratch, tail;
  {
    // The bounds a batch at a time (CategoricalGp::bounds_from), each
    // candidate's values in its own buffers while the batch lasts.
    std::vector<UnfilledDoubles> scratches(kBoundBatch), tails(kBoundBatch);
    std::vector<std::span<const double>> heads, tail_spans;
    std::vector<std::size_t> ids;
    std::vector<CategoricalGp::Posterior> bounds(kBoundBatch);
    const auto flush = [&] {
      gp_.bounds_from(heads, tail_spans, bounds.data());
      for (std::size_t k = 0; k < ids.size(); ++k) {
        means[ids[k]] = bounds[k].mean;
        bound.push_back(
            {gp_.expected_improvement(bounds[k].mean + lift(candidates[ids[k]]), bounds[k].sd),
             ids[k]});
      }
      heads.clear();
      tail_spans.clear();
      ids.clear();
    };
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (picked[i]) continue;
      const std::size_t k = ids.size();
      heads.push_back(kernel_values(candidates[i], tail_rows, scratches[k], tails[k]));
      tail_spans.push_back(tails[k]);
      ids.push_back(i);
      if (ids.size() == kBoundBatch) flush();
    }
    flush();
  }
  // Highest bound first, ties in candidate order (a stable sort's order),
  // taken from a heap: a pick reads at most kSolvedLimit + 1 of them, and
  // sorting all of a listed space's thousands was 3% of a long search.
  const auto after = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  };
  std::make_heap(bound.begin(), bound.end(), after);
  std::size_t best = kNone;
  double best_ei = -1;
  std::size_t solved = 0;
  std::vector<double> k;
  for (auto end = bound.end(); end != bound.begin(); --end) {
    std::pop_heap(bound.begin(), end, after);
    const auto [upper, i] = *(end - 1);
    if (upper <= best_ei || ++solved > kSolvedLimit) break;
    const std::span<const double> head = kernel_values(candidates[i], tail_rows, scratch, tail);
    k.assign(head.begin(), head.end());
    k.insert(k.end(), tail.begin(), tail.end());
    const CategoricalGp::Posterior p = exact(candidates[i], k);
    const double ei = gp_.expected_improvement(p.mean + lift(candidates[i]), p.sd);
    if (ei > best_ei) {
      best_ei = ei;
      best = i;
    }
  }
  return {best, best == kNone ? 0.0 : means[best]};
}

CategoricalGp::Posterior GpSearch::exact(const Candidate& c, std::span<const double> k) {
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

std::span<const double> GpSearch::kernel_values(const Candidate& c, const GpRowTable& tail_rows,
                                                UnfilledDoubles& scratch, UnfilledDoubles& tail) {
  // Sized, then written in place: a push_back per value stayed a call in a
  // sanitizer build (where the linker may keep an -O0 copy of it) and was
  // a quarter of a sampled space's search under ASan.
  tail.resize(tail_rows.size());
  gp_.covariances(*c.row, tail_rows, 0, tail_rows.size(), tail.data());
  if (c.kept != kNone && !cache_.empty()) {
    UnfilledDoubles& kept = cache_[c.kept];
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

double prior_slope(std::span<const double> p, std::span<const double> y, double evidence) {
  const std::size_t n = std::min(p.size(), y.size());
  if (n < 3) return 0;
  double mp = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mp += p[i], my += y[i];
  mp /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (p[i] - mp) * (p[i] - mp);
    sxy += (p[i] - mp) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 1e-12) || !(sxy > 0)) return 0;
  const double slope = sxy / sxx;
  // The slope's squared t statistic: slope^2 over its variance, the
  // residuals' variance over sxx. All rows on the line: no shrinking.
  const double residual = std::max(syy - sxy * slope, 0.0) / static_cast<double>(n - 2);
  if (!(residual > 1e-12 * syy)) return slope;
  const double t2 = slope * slope * sxx / residual;
  return slope * std::max(0.0, 1.0 - evidence / t2);
}

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

}  // namespace kiln::internal
