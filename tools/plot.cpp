// SVG plots for the tools (design in plot.hpp).
#include "tools/plot.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace genx::tools {

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '&')
            out += "&amp;";
        else if (c == '\'')
            out += "&apos;";
        else
            out += c;
    }
    return out;
}

std::string plot_svg(const std::vector<PlotPoint>& points, const PlotLabels& labels) {
    std::vector<std::string> panels;
    for (const PlotPoint& p : points)
        if (std::find(panels.begin(), panels.end(), p.panel) == panels.end()) panels.push_back(p.panel);
    const int pw = 520, ph = 360, margin = 60, legend = 240;
    const int cols = panels.size() > 1 ? 2 : 1;
    const int rows = static_cast<int>((panels.size() + cols - 1) / cols);
    const int width = cols * (pw + legend), height = 40 + rows * (ph + 30) + 20;
    const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                             "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
    std::ostringstream o;
    o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' "
         "fill='white'/>\n<text x='10' y='22' font-size='15'>"
      << xml_escape(labels.title) << (labels.legend.empty() ? "" : " ")
      << xml_escape(labels.legend) << "</text>\n";
    for (size_t k = 0; k < panels.size(); ++k) {
        const int ox = static_cast<int>(k % static_cast<size_t>(cols)) * (pw + legend);
        const int oy = 40 + static_cast<int>(k / static_cast<size_t>(cols)) * (ph + 30);
        const bool logx = std::find(labels.linear_panels.begin(), labels.linear_panels.end(),
                                    panels[k]) == labels.linear_panels.end();
        double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
        std::vector<const PlotPoint*> pts;
        for (const PlotPoint& p : points) {
            if (p.panel != panels[k] || (p.marker <= 0 && p.line <= 0) || (logx && p.x <= 0))
                continue;
            pts.push_back(&p);
            xlo = std::min(xlo, p.x);
            xhi = std::max(xhi, p.x);
            for (double v : {p.marker, p.line})
                if (v > 0) {
                    ylo = std::min(ylo, v);
                    yhi = std::max(yhi, v);
                }
        }
        if (pts.empty()) continue;
        const double x0 = logx ? std::floor(std::log10(xlo)) : 0;
        const double x1 = logx ? std::ceil(std::log10(xhi) + 1e-9) : xhi + 1;
        const double ly0 = std::floor(std::log10(ylo)), ly1 = std::ceil(std::log10(yhi) + 1e-9);
        auto X = [&](double v) {
            const double u = logx ? std::log10(v) : v;
            return ox + margin + (u - x0) / std::max(x1 - x0, 1.0) * (pw - margin - 10);
        };
        auto Y = [&](double v) {
            return oy + ph - 40 - (std::log10(v) - ly0) / std::max(ly1 - ly0, 1.0) * (ph - 60);
        };
        o << "<text x='" << ox + margin << "' y='" << oy + 12 << "' font-size='13'>"
          << xml_escape(panels[k]) << "</text>\n";
        o << "<rect x='" << ox + margin << "' y='" << oy + 20 << "' width='" << pw - margin - 10
          << "' height='" << ph - 60 << "' fill='none' stroke='#888'/>\n";
        if (logx) {
            for (double e = x0; e <= x1; e += 1)
                o << "<text x='" << X(std::pow(10, e)) - 10 << "' y='" << oy + ph - 25 << "'>1e"
                  << e << "</text>\n";
        } else {
            for (double v = 2; v <= x1; v += 2)
                o << "<text x='" << X(v) - 4 << "' y='" << oy + ph - 25 << "'>" << v
                  << "</text>\n";
        }
        for (double e = ly0; e <= ly1; e += 1)
            o << "<text x='" << ox + 8 << "' y='" << Y(std::pow(10, e)) + 4 << "'>1e" << e
              << " s</text>\n";
        o << "<text x='" << ox + margin + 130 << "' y='" << oy + ph - 8 << "'>"
          << xml_escape(logx ? labels.x_label : labels.linear_x_label) << "</text>\n";
        std::vector<std::string> series;
        for (const PlotPoint* p : pts)
            if (std::find(series.begin(), series.end(), p->series) == series.end())
                series.push_back(p->series);
        for (size_t s = 0; s < series.size(); ++s) {
            const char* color = palette[s % 10];
            std::vector<const PlotPoint*> line;
            for (const PlotPoint* p : pts)
                if (p->series == series[s]) line.push_back(p);
            std::sort(line.begin(), line.end(),
                      [](const PlotPoint* a, const PlotPoint* b) { return a->x < b->x; });
            o << "<polyline fill='none' stroke='" << color << "' points='";
            for (const PlotPoint* p : line)
                if (p->line > 0) o << X(p->x) << "," << Y(p->line) << " ";
            o << "'/>\n";
            for (const PlotPoint* p : line)
                if (p->marker > 0)
                    o << "<circle cx='" << X(p->x) << "' cy='" << Y(p->marker) << "' r='3' fill='"
                      << (p->open ? "white" : color) << "' stroke='" << color << "'><title>"
                      << xml_escape(p->tip) << "</title></circle>\n";
            if (s < 24)
                o << "<text x='" << ox + pw + 5 << "' y='" << oy + 30 + 13 * static_cast<int>(s)
                  << "' fill='" << color << "'>" << xml_escape(series[s]) << "</text>\n";
        }
    }
    if (!labels.footer.empty())
        o << "<text x='10' y='" << height - 6 << "'>" << xml_escape(labels.footer) << "</text>\n";
    o << "</svg>\n";
    return o.str();
}

}  // namespace genx::tools
