// SVG panels of best-so-far curves for `kiln-lab bench search`: a framed panel
// with the fraction-of-optimum axis (0.5 to 1), and per strategy a median
// line over its quartile band. The caller maps its own x axis (configs
// measured, simulated seconds) to pixels.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::tool {

struct PlotPanel {
  double x0 = 0, y0 = 0, w = 0, h = 0;
  // The pixel row of a fraction of the optimum (clamped to 0.5..1).
  double y(double fraction) const;
};

// The title above, the frame, the fraction grid and its labels.
void svg_panel_frame(std::ostream& s, const PlotPanel& p, const std::string& title);

// A vertical grid line at pixel column x, labelled below the frame.
void svg_x_tick(std::ostream& s, const PlotPanel& p, double x, const std::string& label);

struct BandPoint {
  double x = 0;  // pixel column
  double q1 = 0, median = 0, q3 = 0;
};

// A strategy's median line and quartile band through `points`, and its
// name in legend slot `index` (bottom right, upwards).
void svg_band(std::ostream& s, const PlotPanel& p, const std::vector<BandPoint>& points,
              const char* color, const std::string& name, std::size_t index);

}  // namespace kiln::tool
