// The Gaussian process of the "gp" search: what it learns from shared
// values and from trends along an axis, that conditioning row by row
// matches a fresh factor, and that repeated configs do not break it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "search/internal/search_gp_model.hpp"

namespace kiln::internal {
namespace {

GpRow row(std::int32_t a, std::int32_t b, double coord = 0) {
  return {{a, b}, {coord}};
}

TEST(CategoricalGp, AValueFastWithOthersIsExpectedFastInANewCombination) {
  // y = f(a) + g(b), a = 4 and b = 1 the fastest values; every pair is
  // measured but (4, 1) itself.
  const double f[] = {3, 2, 2.5, 3, 0, 2}, g[] = {1, 0, 2, 1.5};
  std::vector<GpRow> x;
  std::vector<double> y;
  for (std::int32_t a = 0; a < 6; ++a)
    for (std::int32_t b = 0; b < 4; ++b)
      if (!(a == 4 && b == 1)) {
        x.push_back({{a, b}, {}});
        y.push_back(f[a] + g[b]);
      }
  CategoricalGp gp;
  gp.fit(x, y);
  const double unseen = gp.to_y(gp.predict({{4, 1}, {}}).mean);
  EXPECT_LT(unseen, *std::min_element(y.begin(), y.end()))
      << "predicted faster than anything measured";
  // and among configs of new values too: a = 4 with b = 1 beats a = 1 with b = 1.
  EXPECT_LT(gp.predict({{4, 1}, {}}).mean, gp.predict({{1, 1}, {}}).mean);
}

// Without a trend term a kernel value is read from a table of exp(-theta d)
// over the codes differing: the same bits as computing it, or a search's
// picks would change with the table.
TEST(CategoricalGp, TabledKernelValuesAreTheComputedOnesExactly) {
  std::vector<GpRow> x;
  std::vector<double> y;
  for (std::int32_t a = 0; a < 5; ++a)
    for (std::int32_t b = 0; b < 3; ++b)
      for (std::int32_t c = 0; c < 2; ++c) {
        x.push_back({{a, b, c}, {}});
        y.push_back(0.3 * a + 0.2 * b * b - 0.5 * c + 0.01 * (a * b % 3));
      }
  CategoricalGp gp;
  gp.fit(x, y);
  ASSERT_EQ(gp.hyper().lambda, 0) << "no coordinates: no trend to fit";
  for (const GpRow& a : x)
    for (const GpRow& b : x) {
      std::size_t d = 0;
      for (std::size_t p = 0; p < a.codes.size(); ++p) d += a.codes[p] != b.codes[p];
      const double e = gp.hyper().theta * static_cast<double>(d);
      ASSERT_EQ(gp.covariance(a, b), std::exp(-e));
    }
  // A row with more codes than the table covers is computed, not misread.
  const GpRow wide{{9, 9, 9, 9, 9}, {}}, other{{0, 0, 0, 0, 0}, {}};
  EXPECT_EQ(gp.covariance(wide, other), std::exp(-(gp.hyper().theta * 5.0)));
}

TEST(CategoricalGp, ChoosesATrendAlongAnAxisOnlyWhereThereIsOne) {
  // One ordered axis of 9 positions. Smooth: y rises with position, which
  // the trend term (lambda > 0) explains. Alternating: odd positions slow,
  // a pattern no trend explains.
  std::vector<GpRow> x;
  std::vector<double> smooth, alternating;
  for (std::int32_t p = 0; p < 9; ++p) {
    x.push_back({{p}, {p / 8.0}});
    smooth.push_back(p);
    alternating.push_back(p % 2 ? 5.0 : 1.0);
  }
  CategoricalGp a, b;
  a.fit(x, smooth);
  b.fit(x, alternating);
  EXPECT_GT(a.hyper().lambda, 0);
  EXPECT_EQ(b.hyper().lambda, 0);
}

TEST(CategoricalGp, ConditioningRowByRowMatchesAFreshFactor) {
  std::vector<GpRow> x;
  std::vector<double> y;
  for (std::int32_t i = 0; i < 30; ++i) {
    x.push_back(row(i % 5, (i * 7) % 4, (i % 9) / 8.0));
    y.push_back(std::sin(i * 0.7) + 0.1 * i);
  }
  const std::vector<GpRow> first(x.begin(), x.begin() + 20);
  const std::vector<double> first_y(y.begin(), y.begin() + 20);
  CategoricalGp grown, fresh;
  grown.fit(first, first_y);
  fresh.fit(first, first_y);
  // Grown: 20 rows, then 25, then 30, each extending the factor.
  grown.condition({x.begin(), x.begin() + 25}, {y.begin(), y.begin() + 25});
  grown.condition(x, y);
  // Fresh: the same 30 rows with the first two swapped, which no prefix
  // matches, so the factor is computed anew.
  std::vector<GpRow> swapped = x;
  std::vector<double> swapped_y = y;
  std::swap(swapped[0], swapped[1]);
  std::swap(swapped_y[0], swapped_y[1]);
  fresh.condition(swapped, swapped_y);
  for (const GpRow& r : {row(0, 0, 0.0), row(2, 3, 0.5), row(4, 1, 1.0)}) {
    EXPECT_NEAR(grown.predict(r).mean, fresh.predict(r).mean, 1e-9);
    EXPECT_NEAR(grown.predict(r).sd, fresh.predict(r).sd, 1e-9);
    // The cheap bound is a bound.
    EXPECT_GE(grown.predict_bound(r).sd, grown.predict(r).sd - 1e-12);
    EXPECT_NEAR(grown.predict_bound(r).mean, grown.predict(r).mean, 1e-9);
  }
}

// As the search conditions: each pick's rows are the measured ones plus a
// few believed after them, replaced by the next call. The factor's storage
// grows past its room several times on the way (64, 96, 144 rows) and must
// keep the measured rows' factor through each growth and each replacement.
TEST(CategoricalGp, AFactorGrownPastItsRoomWithRowsReplacedMatchesAFreshOne) {
  std::vector<GpRow> x;
  std::vector<double> y;
  for (std::int32_t i = 0; i < 160; ++i) {
    x.push_back(row(i % 7, (i * 3) % 5, (i % 13) / 12.0));
    y.push_back(std::sin(i * 0.37) + 0.02 * i);
  }
  CategoricalGp grown;
  grown.fit({x.begin(), x.begin() + 10}, {y.begin(), y.begin() + 10});
  for (std::size_t n = 10; n <= 150; ++n) {
    std::vector<GpRow> rows(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<double> times(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n));
    grown.condition(rows, times);
    // Believed rows after the measured ones: configs from the end of x.
    for (std::size_t b = 0; b < 3; ++b) {
      rows.push_back(x[159 - (n + b) % 10]);
      times.push_back(0.5);
    }
    grown.condition(rows, times);
  }
  // Every call after the fit extended the factor: none fell back to a
  // whole one (which a factor spoilt in growing would, at its first zero
  // pivot, and so hide the spoiling).
  EXPECT_EQ(grown.whole_factors(), 1u);
  CategoricalGp fresh;
  fresh.fit({x.begin(), x.begin() + 10}, {y.begin(), y.begin() + 10});
  ASSERT_EQ(fresh.hyper(), grown.hyper());
  const std::vector<GpRow> all(x.begin(), x.begin() + 150);
  const std::vector<double> all_y(y.begin(), y.begin() + 150);
  fresh.condition(all, all_y);
  grown.condition(all, all_y);
  for (const GpRow& r : {row(0, 0, 0.0), row(6, 4, 0.5), row(3, 1, 1.0), x[155]}) {
    EXPECT_NEAR(grown.predict(r).mean, fresh.predict(r).mean, 1e-9);
    EXPECT_NEAR(grown.predict(r).sd, fresh.predict(r).sd, 1e-9);
  }
}

// What the gp search keeps between picks: a candidate's solve against the
// rows conditioned on, extended as rows are appended (and others believed
// after them), gives predict()'s posterior bit for bit, and costs n per
// new row rather than a fresh n^2 solve.
TEST(CategoricalGp, ASolveKeptAcrossConditionsMatchesAFreshOneExactly) {
  std::vector<GpRow> x;
  std::vector<double> y;
  for (std::int32_t i = 0; i < 40; ++i) {
    x.push_back(row(i % 6, (i * 5) % 7, (i % 11) / 10.0));
    y.push_back(std::cos(i * 0.9) + 0.05 * i);
  }
  const GpRow candidate = row(3, 2, 0.3);
  const auto kernels = [&](const CategoricalGp& gp, std::size_t n) {
    std::vector<double> k;
    for (std::size_t j = 0; j < n; ++j) k.push_back(gp.covariance(candidate, x[j]));
    return k;
  };
  CategoricalGp gp;
  gp.fit({x.begin(), x.begin() + 12}, {y.begin(), y.begin() + 12});
  std::vector<double> kept;
  for (std::size_t n : {12u, 13u, 20u, 33u, 40u}) {
    gp.condition({x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n)},
                 {y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n)});
    const std::vector<double> k = kernels(gp, n);
    // Kept over the first rows; the last three stand for this pick's
    // believed rows, solved afresh each time.
    gp.solve_more(std::span(k).first(n - 3), kept);
    std::vector<double> v = kept;
    gp.solve_more(k, v);
    ASSERT_EQ(v.size(), n);
    const CategoricalGp::Posterior exact = gp.predict(candidate);
    const CategoricalGp::Posterior solved = gp.predict_solved(k, v);
    EXPECT_EQ(solved.mean, exact.mean) << n << " rows";
    EXPECT_EQ(solved.sd, exact.sd) << n << " rows";
    kept.resize(n - 3);  // as the search keeps the measured rows' part only
  }
}

// The bound pass batched (bounds_from) gives every candidate the bits of
// bound_from one by one: in full batches of its lanes, in the remainder
// past them, with tails, and where a batch's heads differ in length (the
// batch then falls back to one at a time).
TEST(CategoricalGp, BoundsInABatchAreTheOneByOneBoundsExactly) {
  std::vector<GpRow> x;
  std::vector<double> y;
  for (std::int32_t i = 0; i < 37; ++i) {
    x.push_back(row(i % 5, (i * 3) % 7, (i % 9) / 8.0));
    y.push_back(std::sin(i * 1.3) + 0.02 * i);
  }
  CategoricalGp gp;
  gp.fit(x, y);
  std::vector<std::vector<double>> heads, tails;
  for (std::int32_t c = 0; c < 11; ++c) {  // two batches of four and three more
    const GpRow candidate = row(c % 6, (c * 2) % 8, (c % 5) / 4.0);
    // Candidate 5's head is a row short: its batch is ragged.
    const std::size_t split = c == 5 ? x.size() - 4 : x.size() - 3;
    std::vector<double> head, tail;
    for (std::size_t j = 0; j < x.size(); ++j)
      (j < split ? head : tail).push_back(gp.covariance(candidate, x[j]));
    heads.push_back(head);
    tails.push_back(tail);
  }
  const std::vector<std::span<const double>> head_spans(heads.begin(), heads.end()),
      tail_spans(tails.begin(), tails.end());
  std::vector<CategoricalGp::Posterior> batched(heads.size());
  gp.bounds_from(head_spans, tail_spans, batched.data());
  for (std::size_t c = 0; c < heads.size(); ++c) {
    const CategoricalGp::Posterior one = gp.bound_from(heads[c], tails[c]);
    EXPECT_EQ(batched[c].mean, one.mean) << "candidate " << c;
    EXPECT_EQ(batched[c].sd, one.sd) << "candidate " << c;
    EXPECT_NE(one.mean, 0) << "candidate " << c << ": a bound of something";
  }
}

TEST(CategoricalGp, RepeatedConfigsWithDifferentTimesStillFit) {
  // The same config measured three times, as a rerun does: K is singular
  // without noise; the fit finds a noise that factors.
  std::vector<GpRow> x = {row(1, 1), row(1, 1), row(1, 1), row(2, 0), row(0, 3)};
  std::vector<double> y = {1.0, 1.2, 0.9, 2.0, 3.0};
  CategoricalGp gp;
  gp.fit(x, y);
  const CategoricalGp::Posterior p = gp.predict(row(1, 1));
  EXPECT_TRUE(std::isfinite(p.mean) && std::isfinite(p.sd));
  EXPECT_NEAR(gp.to_y(p.mean), 1.03, 0.2);
}

TEST(CategoricalGp, ExpectedImprovementRisesWithSpeedAndUncertainty) {
  CategoricalGp gp;
  gp.fit({row(0, 0), row(1, 1), row(2, 2)}, {1.0, 2.0, 3.0});
  EXPECT_GT(gp.expected_improvement(-1.5, 0.5), gp.expected_improvement(-1.0, 0.5));
  EXPECT_GT(gp.expected_improvement(-1.0, 0.8), gp.expected_improvement(-1.0, 0.2));
}

}  // namespace
}  // namespace kiln::internal
