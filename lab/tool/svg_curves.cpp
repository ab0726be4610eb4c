// svg_curves: the pieces every panel of `kiln-lab bench search --plot` shares.
#include "svg_curves.hpp"

#include <algorithm>

namespace kiln::tool {

double PlotPanel::y(double fraction) const {
  return y0 + h * (1 - std::clamp((fraction - 0.5) / 0.5, 0.0, 1.0));
}

void svg_panel_frame(std::ostream& s, const PlotPanel& p, const std::string& title) {
  s << "<text x='" << p.x0 << "' y='" << p.y0 - 10 << "' font-weight='bold'>" << title
    << "</text>\n";
  s << "<rect x='" << p.x0 << "' y='" << p.y0 << "' width='" << p.w << "' height='" << p.h
    << "' fill='none' stroke='#999'/>\n";
  for (double frac : {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0}) {
    s << "<line x1='" << p.x0 << "' x2='" << p.x0 + p.w << "' y1='" << p.y(frac) << "' y2='"
      << p.y(frac) << "' stroke='#eee'/><text x='" << p.x0 - 30 << "' y='" << p.y(frac) + 4 << "'>"
      << frac << "</text>\n";
  }
  s << "<text x='" << p.x0 - 45 << "' y='" << p.y0 - 2 << "'>of best</text>\n";
}

void svg_x_tick(std::ostream& s, const PlotPanel& p, double x, const std::string& label) {
  s << "<line x1='" << x << "' x2='" << x << "' y1='" << p.y0 << "' y2='" << p.y0 + p.h
    << "' stroke='#eee'/><text x='" << x - 12 << "' y='" << p.y0 + p.h + 14 << "'>" << label
    << "</text>\n";
}

void svg_band(std::ostream& s, const PlotPanel& p, const std::vector<BandPoint>& points,
              const char* color, const std::string& name, std::size_t index) {
  std::string median, band_top, band_bottom;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const BandPoint& b = points[k];
    const std::string x = std::to_string(b.x);
    median += (k == 0 ? "M" : "L") + x + "," + std::to_string(p.y(b.median));
    band_top += (k == 0 ? "M" : "L") + x + "," + std::to_string(p.y(b.q3));
    band_bottom = "L" + x + "," + std::to_string(p.y(b.q1)) + band_bottom;
  }
  s << "<path d='" << band_top << band_bottom << "Z' fill='" << color
    << "' fill-opacity='0.15' stroke='none'/>\n<path d='" << median << "' fill='none' stroke='"
    << color << "' stroke-width='2'/>\n";
  s << "<text x='" << p.x0 + p.w - 110 << "' y='"
    << p.y0 + p.h - 10 - 14 * static_cast<double>(index) << "' fill='" << color << "'>" << name
    << "</text>\n";
}

}  // namespace kiln::tool
