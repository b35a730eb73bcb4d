// A time-against-size plot as SVG for the command-line tools: panels of
// series, each a line through one value (a model's prediction) and a
// marker at another (a measurement or a simulation), time on a log axis.
// genx-tune plots measured against predicted, genx-sim --sweep simulated
// against predicted.
#pragma once

#include <string>
#include <vector>

namespace genx::tools {

struct PlotPoint {
    std::string panel;   // one panel per distinct value, in first-seen order
    std::string series;  // one colour per distinct value within a panel
    double x = 0;        // > 0 on a log axis
    double marker = 0;   // seconds at the marker (0: none)
    double line = 0;     // seconds on the series' line (0: none)
    bool open = false;   // an open marker (e.g. held out of a fit)
    std::string tip;     // the marker's tooltip
};

struct PlotLabels {
    std::string title;
    std::string legend;  // after the title, e.g. "(markers: measured, lines: GenModel)"
    std::string footer;  // one line at the bottom, may be empty
    // Panels whose x axis is linear (the rest are log), and their x labels.
    std::vector<std::string> linear_panels;
    std::string x_label = "message bytes";
    std::string linear_x_label;
};

std::string plot_svg(const std::vector<PlotPoint>& points, const PlotLabels& labels);

// XML text escaping for SVG and HTML.
std::string xml_escape(const std::string& s);

}  // namespace genx::tools
