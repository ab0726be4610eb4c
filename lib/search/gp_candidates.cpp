// Where gp's picks come from (GpSearch, gp_search.hpp): every unmeasured
// config of a space small enough to list, a draw of them with the fastest
// configs' neighbours, or, for a space too large to keep values for, the
// candidates of an epoch.
#include <algorithm>
#include <random>
#include <unordered_set>

#include "search/internal/gp_search.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln::internal {

// NOTES: candidates in epochs. A pick scores each candidate against every
// row conditioned on. Where the space is too large to keep those values
// for all its configs (sampled_), a pick used to draw its own thousands
// of candidates and compute each one's values afresh: candidates x rows
// kernels a pick, n^2 solves for the most promising, and a search of the
// hub's hotspot space spent minutes a seed on that alone
// (docs/lab/search-cost-journal.md, "Candidates in epochs"). Instead the
// candidates are drawn once per epoch (bounds_.drawn unmeasured configs
// before the bound, bounds_.candidates past it, plus each pick's
// neighbours of the fastest), and their kernel values and solves are
// kept and extended row by row, as a listed space's are: a pick costs
// candidates x rows multiply-adds. An epoch lasts bounds_.renew
// measurements before the bound and bounds_.epoch past it. Fresh draws
// keep the search looking across the space: renewed every 32, 8,192
// candidates fixed for 32 picks found less late in a run than about
// 1,500 fresh ones a pick had; every 8, as much.
void GpSearch::draw_epoch(std::size_t lasts) {
  epoch_drawn_ = true;
  epoch_at_ = measured_.size();
  epoch_.clear();
  epoch_rows_.clear();
  epoch_index_.clear();
  epoch_prior_.clear();
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
      if (prior_) epoch_prior_.push_back(pool_prior_[i]);
    }
  } else if (const std::vector<Config>* listed = sampler().listed(); listed && !listed->empty()) {
    // Uniform over the space's configs, as a draw by cartesian index is,
    // without asking the space which indices it holds.
    std::uniform_int_distribution<std::size_t> pick(0, listed->size() - 1);
    std::unordered_set<std::uint64_t> drawn;
    for (std::size_t tries = 0; tries < kEpochTries * cands() && epoch_.size() < cands(); ++tries) {
      const std::size_t i = pick(sampler().rng());
      const std::uint64_t at = sampler().listed_index(i);
      if (sampler().taken_at(at) || !drawn.insert(at).second) continue;
      epoch_.push_back((*listed)[i]);
      epoch_rows_.push_back(encoder_.encode_at(at));
      epoch_index_.push_back(at);
      if (prior_) epoch_prior_.push_back(prior_->at(epoch_.back()));
    }
  } else {
    const ConfigSpace& space = sampler().space();
    std::uniform_int_distribution<std::uint64_t> pick(0, space.cartesian_size() - 1);
    std::unordered_set<std::uint64_t> drawn;
    // Drawn once an epoch, so more tries than a pick's draw: in the hub's
    // hotspot space 2.4% of the cartesian indices are configs.
    for (std::size_t tries = 0; tries < kEpochTries * cands() && epoch_.size() < cands(); ++tries) {
      const std::uint64_t at = pick(sampler().rng());
      // Cheapest first: most indices are not configs, and the set holds
      // only the few thousand accepted.
      if (!member(at) || sampler().taken_at(at) || !drawn.insert(at).second) continue;
      epoch_.push_back(space.config_at(at));
      epoch_rows_.push_back(encoder_.encode_at(at));
      epoch_index_.push_back(at);
      if (prior_) epoch_prior_.push_back(prior_->at(epoch_.back()));
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

std::vector<GpSearch::Candidate> GpSearch::unmeasured() {
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
      if (prior_) epoch_prior_.push_back(prior_->at(c));
      epoch_.push_back(std::move(c));
      epoch_index_.push_back(at);
      cache_.emplace_back();
      solved_.emplace_back();
    }
    for (std::size_t i = 0; i < epoch_.size(); ++i)
      if (!sampler().taken_at(epoch_index_[i]))
        out.push_back({&epoch_[i], &epoch_rows_[i], i, prior_ ? epoch_prior_[i] : 0.0});
    return out;
  }
  for (std::size_t i = 0; i < pool_.size(); ++i)
    if (!sampler().taken_at(pool_index_[i]))
      out.push_back({&pool_[i], &pool_rows_[i], i, prior_ ? pool_prior_[i] : 0.0});
  if (out.size() <= kCandidates) return out;
  std::shuffle(out.begin(), out.end(), sampler().rng());
  out.resize(kCandidates);
  // Where a random draw from a large space seldom lands.
  for (Config& c : fastest_neighbours()) {
    drawn_rows_.push_back(encoder_.encode(c));
    drawn_.push_back(std::move(c));
  }
  for (std::size_t j = 0; j < drawn_.size(); ++j)
    out.push_back({&drawn_[j], &drawn_rows_[j], kNone, prior_at(drawn_[j])});
  return out;
}

std::vector<Config> GpSearch::fastest_neighbours() {
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

bool GpSearch::member(std::uint64_t at) {
  const ConfigSpace& space = sampler().space();
  if (member_.empty() && space.cartesian_size() <= kMemberLimit)
    member_.assign(space.cartesian_size(), kUnknown);
  std::uint8_t unknown = kUnknown;
  std::uint8_t& known = member_.empty() ? unknown : member_[at];
  if (known == kUnknown) known = space.violated(space.config_at(at)).empty() ? kIn : kOut;
  return known == kIn;
}

}  // namespace kiln::internal
