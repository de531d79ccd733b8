// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table of the convolution (convolve, convolve_backward, convolve_all, and
// ConvolutionPlan with its forward and backward): classes "extents", "empty", "parameter", "enum",
// "nonfinite" and "aliasing", a row per (entry point, bad input).
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;

template <class Space>
class BadInputConvolve : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputConvolve, TestUtil::PrimarySpaces, TestUtil::SpaceName);

template <class Space>
using Vec = Kokkos::View<double*, typename Space::memory_space>;
template <class Space>
using Mat = Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using Strided = Kokkos::View<double**, Kokkos::LayoutStride, typename Space::memory_space>;
template <class Space>
using Strided1 = Kokkos::View<double*, Kokkos::LayoutStride, typename Space::memory_space>;

/// Sets entry i of v to x (on the host, through a copy).
template <class View>
void poke(const View& v, std::int64_t i, double x) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  h(i) = x;
  Kokkos::deep_copy(v, h);
}

TYPED_TEST(BadInputConvolve, Convolve) {
  using Space = TypeParam;
  const Space sp;
  Vec<Space> p("p", 5), q("q", 3), r("r", 7), r6("r6", 6), e("e", 0), pn("pn", 5), qi("qi", 3);
  Kokkos::deep_copy(p, 0.5);
  Kokkos::deep_copy(q, 0.25);
  Kokkos::deep_copy(pn, 0.5);
  Kokkos::deep_copy(qi, 0.25);
  poke(pn, 2, std::numeric_limits<double>::quiet_NaN());
  poke(qi, 1, std::numeric_limits<double>::infinity());
  Mat<Space> P2("P2", 2, 5), Q3("Q3", 3, 3), R2("R2", 2, 7), R3("R3", 3, 7), big("big", 1, 20);
  Kokkos::deep_copy(P2, 0.5);
  Kokkos::deep_copy(Q3, 0.5);
  // r over p's memory; an output with a zero stride.
  Vec<Space> pr("pr", 12);
  auto p_in = Kokkos::subview(pr, std::make_pair(0, 5));
  auto r_on_p = Kokkos::subview(pr, std::make_pair(3, 10));
  Strided1<Space> r0("r0", Kokkos::LayoutStride(7, 0));
  Strided<Space> R0("R0", Kokkos::LayoutStride(2, 0, 7, 1));
  std::vector<BadInputRow> rows = {
      {"convolve", "extents", "r is too short: length 6 but m + n - 1 = 7",
       [&] { convolve(sp, p, q, r6); }},
      {"convolve", "extents", "batch counts differ: p has 2 rows and q has 3",
       [&] { convolve(sp, P2, Q3, R2); }},
      {"convolve", "extents", "r has 3 rows but the batch has 2", [&] { convolve(sp, P2, q, R3); }},
      {"convolve", "empty", "p is empty", [&] { convolve(sp, e, q, r); }},
      {"convolve", "empty", "q is empty", [&] { convolve(sp, p, e, r); }},
      {"convolve", "nonfinite", "entries of r are NaN or Inf", [&] { convolve(sp, pn, q, r); }},
      {"convolve", "nonfinite", "entries of r are NaN or Inf", [&] { convolve(sp, p, qi, r); }},
      {"convolve", "aliasing", "r overlaps p", [&] { convolve(sp, p_in, q, r_on_p); }},
      {"convolve", "aliasing", "r has zero or overlapping strides", [&] { convolve(sp, p, q, r0); }},
      {"convolve", "aliasing", "r has zero or overlapping strides",
       [&] { convolve(sp, P2, q, R0); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputConvolve, ConvolveBackward) {
  using Space = TypeParam;
  const Space sp;
  Vec<Space> p("p", 5), q("q", 3), g("g", 7), g6("g6", 6), gp("gp", 5), gq("gq", 3),
      gp4("gp4", 4), gq4("gq4", 4), e("e", 0), none, gn("gn", 7);
  Kokkos::deep_copy(p, 0.5);
  Kokkos::deep_copy(q, 0.25);
  Kokkos::deep_copy(g, 1.0);
  Kokkos::deep_copy(gn, 1.0);
  poke(gn, 3, std::numeric_limits<double>::infinity());
  Mat<Space> P2("P2", 2, 5), Q3("Q3", 3, 3), G2("G2", 2, 7), G3("G3", 3, 7), GP2("GP2", 2, 5);
  Vec<Space> both("both", 8);
  auto gp_on = Kokkos::subview(both, std::make_pair(0, 5));
  auto gq_on = Kokkos::subview(both, std::make_pair(4, 7));
  std::vector<BadInputRow> rows = {
      {"convolve_backward", "extents", "g is too short: length 6 but m + n - 1 = 7",
       [&] { convolve_backward(sp, p, q, g6, gp, gq); }},
      {"convolve_backward", "extents", "grad_p is 1 x 4 but p is 1 x 5",
       [&] { convolve_backward(sp, p, q, g, gp4, gq); }},
      {"convolve_backward", "extents", "grad_q is 1 x 4 but q is 1 x 3",
       [&] { convolve_backward(sp, p, q, g, none, gq4); }},
      {"convolve_backward", "extents", "batch counts differ",
       [&] { convolve_backward(sp, P2, Q3, G2, GP2, Q3); }},
      {"convolve_backward", "extents", "g has 3 rows but the batch has 2",
       [&] { convolve_backward(sp, P2, q, G3, GP2, gq); }},
      {"convolve_backward", "empty", "p is empty", [&] { convolve_backward(sp, e, q, g, e, gq); }},
      {"convolve_backward", "nonfinite", "entries of grad_p are NaN or Inf",
       [&] { convolve_backward(sp, p, q, gn, gp, none); }},
      {"convolve_backward", "aliasing", "grad_q overlaps g",
       [&] { convolve_backward(sp, p, q, g, none, Kokkos::subview(g, std::make_pair(0, 3))); }},
      {"convolve_backward", "aliasing", "grad_p overlaps grad_q",
       [&] { convolve_backward(sp, p, q, g, gp_on, gq_on); }},
      {"convolve_backward", "aliasing", "grad_p overlaps p",
       [&] { convolve_backward(sp, p, q, g, p, none); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputConvolve, ConvolveAll) {
  using Space = TypeParam;
  const Space sp;
  Mat<Space> pmfs("pmfs", 4, 3), e("e", 0, 3), pn("pn", 4, 3);
  Kokkos::deep_copy(pmfs, 0.25);
  Kokkos::deep_copy(pn, 0.25);
  {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pn);
    h(2, 1) = std::numeric_limits<double>::quiet_NaN();
    Kokkos::deep_copy(pn, h);
  }
  Vec<Space> res("res", 9), res8("res8", 8);
  Vec<Space> flat("flat", 12);
  Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      over(flat.data(), 4, 3);
  std::vector<BadInputRow> rows = {
      {"convolve_all", "extents", "result is too short: length 8 but N (L - 1) + 1 = 9",
       [&] { convolve_all(sp, pmfs, res8); }},
      {"convolve_all", "empty", "pmfs is empty", [&] { convolve_all(sp, e, res); }},
      {"convolve_all", "nonfinite", "entries of result are NaN or Inf",
       [&] { convolve_all(sp, pn, res); }},
      {"convolve_all", "aliasing", "result overlaps pmfs", [&] { convolve_all(sp, over, flat); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputConvolve, ConvolutionPlan) {
  using Space = TypeParam;
  using plan_t = ConvolutionPlan<Space, double>;
  const Space sp;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto make = [&](auto edit) {
    ConvolutionPlanOptions o;
    edit(o);
    plan_t plan(sp, 5, 3, o);
  };
  Vec<Space> p("p", 5), q("q", 3), r("r", 7), r6("r6", 6), p4("p4", 4), q4("q4", 4),
      pn("pn", 5), gp("gp", 5), gq("gq", 3), gg("gg", 7);
  Kokkos::deep_copy(gg, 1.0);
  Kokkos::deep_copy(p, 0.5);
  Kokkos::deep_copy(q, 0.25);
  Kokkos::deep_copy(pn, 0.5);
  poke(pn, 2, std::numeric_limits<double>::quiet_NaN());
  Mat<Space> P1("P1", 1, 5), P2("P2", 2, 5), R1("R1", 1, 7), R3("R3", 3, 7);
  Vec<Space> pr("pr", 12);
  auto p_in = Kokkos::subview(pr, std::make_pair(0, 5));
  auto r_on_p = Kokkos::subview(pr, std::make_pair(3, 10));
  // Plans of each method where this space has one (Method::fft needs an FFT backend).
  ConvolutionPlanOptions fo;
  fo.method = plan_t::fft_available ? ConvolutionMethod::fft : ConvolutionMethod::direct;
  plan_t plan(sp, 5, 3, fo);
  plan_t plan_b(sp, 5, 3, 2, 1, fo);
  std::vector<BadInputRow> rows = {
      {"ConvolutionPlan", "enum", "opts.method = 99 is not a valid ConvolutionMethod",
       [&] {
         make([](ConvolutionPlanOptions& o) { o.method = static_cast<ConvolutionMethod>(99); });
       }},
      {"ConvolutionPlan", "enum", "opts.planning = -1 is not a valid FftPlanning",
       [&] {
         make([](ConvolutionPlanOptions& o) { o.planning = static_cast<FftPlanning>(-1); });
       }},
      {"ConvolutionPlan", "parameter", "opts.rtol must be finite and > 0, got 0",
       [&] { make([](ConvolutionPlanOptions& o) { o.rtol = 0.0; }); }},
      {"ConvolutionPlan", "parameter", "opts.rtol must be finite and > 0, got -1",
       [&] { make([](ConvolutionPlanOptions& o) { o.rtol = -1.0; }); }},
      {"ConvolutionPlan", "parameter", "opts.rtol must be finite and > 0, got nan",
       [&] { make([&](ConvolutionPlanOptions& o) { o.rtol = nan; }); }},
      {"ConvolutionPlan", "parameter", "opts.atol must be finite and >= 0",
       [&] { make([](ConvolutionPlanOptions& o) { o.atol = -1e-3; }); }},
      {"ConvolutionPlan", "parameter", "opts.fft_min_length must be >= 0",
       [&] { make([](ConvolutionPlanOptions& o) { o.fft_min_length = -1; }); }},
      {"ConvolutionPlan", "extents", "lengths must be >= 1: m = 0, n = 3",
       [&] { plan_t bad(sp, 0, 3); }},
      {"ConvolutionPlan", "extents", "batch counts differ: batch_p = 2 and batch_q = 3",
       [&] { plan_t bad(sp, 5, 3, 2, 3); }},
      {"ConvolutionPlan::forward", "extents", "p is 1 x 4 but the plan was made for 1 x 5",
       [&] { plan.forward(p4, q, r); }},
      {"ConvolutionPlan::forward", "extents", "q is 1 x 4 but the plan was made for 1 x 3",
       [&] { plan.forward(p, q4, r); }},
      {"ConvolutionPlan::forward", "extents", "p is 1 x 5 but the plan was made for 2 x 5",
       [&] { plan_b.forward(P1, q, R1); }},
      {"ConvolutionPlan::forward", "extents", "r is too short: length 6 but m + n - 1 = 7",
       [&] { plan.forward(p, q, r6); }},
      {"ConvolutionPlan::forward", "extents", "r has 3 rows but the batch has 2",
       [&] { plan_b.forward(P2, q, R3); }},
      {"ConvolutionPlan::forward", "aliasing", "r overlaps p",
       [&] { plan.forward(p_in, q, r_on_p); }},
      {"ConvolutionPlan::forward", "nonfinite", "entries of r are NaN or Inf",
       [&] { plan.forward(pn, q, r); }},
      {"ConvolutionPlan::backward", "extents", "p is 1 x 4 but the plan was made for 1 x 5",
       [&] { plan.backward(p4, q, gg, p4, q); }},
      {"ConvolutionPlan::backward", "extents", "g is too short: length 6 but m + n - 1 = 7",
       [&] { plan.backward(p, q, r6, gp, gq); }},
      {"ConvolutionPlan::backward", "extents", "grad_q is 1 x 4 but q is 1 x 3",
       [&] { plan.backward(p, q, gg, gp, q4); }},
      {"ConvolutionPlan::backward", "aliasing", "grad_p overlaps p",
       [&] { plan.backward(p, q, gg, p, gq); }},
      {"ConvolutionPlan::backward", "nonfinite", "entries of grad_q are NaN or Inf",
       [&] { plan.backward(pn, q, gg, gp, gq); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
