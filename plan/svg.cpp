// Plan drawing (layout and conventions in svg.hpp).
#include "plan/svg.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "plan/print.hpp"

namespace genx {

namespace {

std::string esc(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// Cuts a label to `max` characters (UTF-8 safe: block labels are ASCII).
std::string shorten(const std::string& s, size_t max) {
    if (s.size() <= max || max < 2) return s;
    return s.substr(0, max - 1) + "\xE2\x80\xA6";  // "…"
}

// Does rank `rank` fold data received in step `s` into a partial sum there?
bool reduces_received(const Step& st, const Transfer& recv) {
    for (const LocalOp& op : st.ops) {
        if (op.kind != OpKind::Reduce) continue;
        if (op.dst == recv.buffer) return true;
        for (BufferId b : op.srcs)
            if (b == recv.buffer) return true;
    }
    return false;
}

const Transfer* find_recv(const Plan& plan, int rank, int step, int from) {
    const Program& prog = plan.programs[static_cast<size_t>(rank)];
    if (step >= static_cast<int>(prog.steps.size())) return nullptr;
    for (const Transfer& t : prog.steps[static_cast<size_t>(step)].recvs)
        if (t.peer == from) return &t;
    return nullptr;
}

}  // namespace

std::string plan_to_svg(const Plan& plan) {
    const int P = plan.nranks;
    const int S = plan.max_steps();
    const double col = 160, left = 70, top = 64, bottom = 52;
    const double row = P <= 16 ? 44 : (P <= 48 ? 28 : 18);
    const int font = P <= 16 ? 11 : (P <= 48 ? 10 : 8);
    const double width = std::max(left + std::max(S, 1) * col + 30, 640.0);
    const double height = top + std::max(P, 1) * row + bottom;
    const size_t label_chars = static_cast<size_t>(col * 0.55 / (font * 0.6));
    auto y_of = [&](int r) { return top + (r + 0.5) * row; };
    auto x_at = [&](int s, double f) { return left + s * col + f * col; };

    std::string o;
    o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" +
         num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
    o += "<defs>"
         "<marker id=\"ar\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
         "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
         "fill=\"#2166ac\"/></marker>"
         "<marker id=\"ar-red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
         "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
         "fill=\"#b2182b\"/></marker></defs>\n";
    o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    const std::string heading = plan.algorithm +
                                (plan.params.empty() ? "" : " (" + plan.params + ")") +
                                ": P=" + std::to_string(P) + ", " + std::to_string(plan.nblocks) +
                                " blocks, " + std::to_string(S) + " steps";
    o += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + esc(heading) +
         "</text>\n";

    // Columns: alternating bands, step numbers, and whether the step reduces.
    for (int s = 0; s < S; ++s) {
        bool reduces = false;
        for (const Program& prog : plan.programs)
            if (s < static_cast<int>(prog.steps.size()))
                for (const LocalOp& op : prog.steps[static_cast<size_t>(s)].ops)
                    reduces = reduces || op.kind == OpKind::Reduce;
        if (s % 2 == 1)
            o += "<rect x=\"" + num(x_at(s, 0)) + "\" y=\"" + num(top - 6) + "\" width=\"" +
                 num(col) + "\" height=\"" + num(P * row + 12) + "\" fill=\"#f4f4f4\"/>\n";
        o += "<text x=\"" + num(x_at(s, 0.5)) + "\" y=\"" + num(top - 24) +
             "\" font-size=\"12\" text-anchor=\"middle\">step " + std::to_string(s) + "</text>\n";
        o += "<text x=\"" + num(x_at(s, 0.5)) + "\" y=\"" + num(top - 10) +
             "\" font-size=\"10\" text-anchor=\"middle\" fill=\"" +
             (reduces ? "#b2182b\">reduce" : "#2166ac\">store") + "</text>\n";
    }
    // Rows: rank labels and time lines.
    for (int r = 0; r < P; ++r) {
        o += "<text x=\"" + num(left - 10) + "\" y=\"" + num(y_of(r) + font * 0.35) +
             "\" font-size=\"" + std::to_string(font + 1) + "\" text-anchor=\"end\">rank " +
             std::to_string(r) + "</text>\n";
        o += "<line x1=\"" + num(left) + "\" y1=\"" + num(y_of(r)) + "\" x2=\"" +
             num(left + S * col) + "\" y2=\"" + num(y_of(r)) +
             "\" stroke=\"#cccccc\" stroke-width=\"1\"/>\n";
    }

    // Messages, then the local-op marks on top of them.
    for (int r = 0; r < P; ++r) {
        const Program& prog = plan.programs[static_cast<size_t>(r)];
        for (size_t s = 0; s < prog.steps.size(); ++s) {
            const Step& st = prog.steps[s];
            const int si = static_cast<int>(s);
            for (size_t k = 0; k < st.sends.size(); ++k) {
                const Transfer& t = st.sends[k];
                if (t.peer < 0 || t.peer >= P) continue;
                const Transfer* rv = find_recv(plan, t.peer, si, r);
                const bool red =
                    rv != nullptr &&
                    reduces_received(plan.programs[static_cast<size_t>(t.peer)].steps[s], *rv);
                const std::string colour = red ? "#b2182b" : "#2166ac";
                const double x1 = x_at(si, 0.08), x2 = x_at(si, 0.90);
                const double y1 = y_of(r), y2 = y_of(t.peer);
                const std::string blocks = format_blocks(t.blocks);
                o += "<g><title>" +
                     esc("step " + std::to_string(s) + ": rank " + std::to_string(r) + " -> " +
                         std::to_string(t.peer) + ": " + blocks + " from " +
                         format_buffer(t.buffer) +
                         (rv ? " into " + format_buffer(rv->buffer) : " (no matching receive)")) +
                     "</title>";
                o += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) +
                     "\" y2=\"" + num(y2) + "\" stroke=\"" + colour +
                     "\" stroke-width=\"1.3\" stroke-opacity=\"0.8\" marker-end=\"url(#" +
                     (red ? "ar-red" : "ar") + ")\"/>";
                // Labels sit on the sender's row on the side the arrow
                // leaves from (above a downward arrow, below an upward one),
                // where only crossing arrows pass; several messages of one
                // rank in one step stack away from the row.
                const bool down = y2 > y1;
                const double lx = x1 + 2;
                const double ly = down ? y1 - 3 - static_cast<double>(k) * (font + 1)
                                       : y1 + font + 1 + static_cast<double>(k) * (font + 1);
                o += "<text x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" font-size=\"" +
                     std::to_string(font) + "\" fill=\"" + colour +
                     "\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">" +
                     esc(shorten(blocks, label_chars)) + "</text></g>\n";
            }
        }
    }
    for (int r = 0; r < P; ++r) {
        const Program& prog = plan.programs[static_cast<size_t>(r)];
        for (size_t s = 0; s < prog.steps.size(); ++s) {
            const Step& st = prog.steps[s];
            if (st.ops.empty()) continue;
            bool any_reduce = false;
            std::string tip = "step " + std::to_string(s) + ", rank " + std::to_string(r) + ":";
            for (const LocalOp& op : st.ops) {
                any_reduce = any_reduce || op.kind == OpKind::Reduce;
                tip += op.kind == OpKind::Reduce ? " reduce " + format_buffer(op.dst) + " ⊕="
                                                 : " copy " + format_buffer(op.dst) + " :=";
                for (BufferId b : op.srcs) tip += " " + format_buffer(b);
                tip += " on " + format_blocks(op.blocks) + ";";
            }
            const double cx = x_at(static_cast<int>(s), 0.955), cy = y_of(r);
            const double rad = std::min(7.0, row * 0.22);
            o += "<g><title>" + esc(tip) + "</title><circle cx=\"" + num(cx) + "\" cy=\"" +
                 num(cy) + "\" r=\"" + num(rad) + "\" fill=\"white\" stroke=\"" +
                 (any_reduce ? "#b2182b" : "#444444") + "\" stroke-width=\"1.2\"/>";
            o += "<text x=\"" + num(cx) + "\" y=\"" + num(cy + rad * 0.55) + "\" font-size=\"" +
                 num(rad * 1.6) + "\" text-anchor=\"middle\" fill=\"" +
                 (any_reduce ? "#b2182b\">⊕" : "#444444\">=") + "</text></g>\n";
        }
    }

    o += "<text x=\"10\" y=\"" + num(height - 26) +
         "\" font-size=\"11\" fill=\"#555555\">arrow: one message from the sender's row to the "
         "receiver's row, labelled with its blocks</text>\n";
    o += "<text x=\"10\" y=\"" + num(height - 11) +
         "\" font-size=\"11\" fill=\"#555555\">red: the receiver reduces it, blue: stored as is; "
         "⊕: local reduce after the step's transfers; hover for buffers</text>\n";
    o += "</svg>\n";
    return o;
}

std::vector<BlockTree> block_trees(const Plan& plan) {
    const int P = plan.nranks;
    std::vector<BlockTree> out;
    // parent/step per (block, rank): the last receive of b into the result.
    std::vector<std::vector<int>> parent(static_cast<size_t>(plan.nblocks),
                                         std::vector<int>(static_cast<size_t>(P), -1));
    std::vector<std::vector<int>> when(parent);
    for (int r = 0; r < P; ++r) {
        const Program& prog = plan.programs[static_cast<size_t>(r)];
        for (size_t s = 0; s < prog.steps.size(); ++s)
            for (const Transfer& t : prog.steps[s].recvs)
                if (t.buffer == kResult)
                    for (int b : t.blocks) {
                        parent[static_cast<size_t>(b)][static_cast<size_t>(r)] = t.peer;
                        when[static_cast<size_t>(b)][static_cast<size_t>(r)] = static_cast<int>(s);
                    }
    }
    for (int b = 0; b < plan.nblocks; ++b) {
        const auto& par = parent[static_cast<size_t>(b)];
        BlockTree* same = nullptr;
        for (BlockTree& t : out)
            if (t.parent == par && t.step == when[static_cast<size_t>(b)]) same = &t;
        if (same != nullptr) {
            same->blocks.push_back(b);
            continue;
        }
        BlockTree t;
        t.blocks = {b};
        t.parent = par;
        t.step = when[static_cast<size_t>(b)];
        for (int r = 0; r < P; ++r)
            if (par[static_cast<size_t>(r)] < 0) {
                // The root: nobody sends it b's final value, and it sends it on.
                bool sends = false;
                for (int q = 0; q < P; ++q) sends = sends || par[static_cast<size_t>(q)] == r;
                if (sends || t.root < 0) t.root = r;
                if (sends) break;
            }
        out.push_back(std::move(t));
    }
    return out;
}

std::string block_trees_to_svg(const Plan& plan, int max_trees) {
    const std::vector<BlockTree> trees = block_trees(plan);
    const int P = plan.nranks;
    const double r = 11, dx = 30, dy = 46, pad = 16, head = 34;
    struct Panel {
        std::vector<std::vector<int>> layers;
        std::vector<int> depth;
        double w = 0, h = 0;
    };
    std::vector<Panel> panels;
    const int shown = std::min(static_cast<int>(trees.size()), max_trees);
    for (int k = 0; k < shown; ++k) {
        const BlockTree& t = trees[static_cast<size_t>(k)];
        Panel p;
        p.depth.assign(static_cast<size_t>(P), -1);
        std::vector<std::vector<int>> kids(static_cast<size_t>(P));
        for (int q = 0; q < P; ++q)
            if (t.parent[static_cast<size_t>(q)] >= 0) kids[static_cast<size_t>(t.parent[static_cast<size_t>(q)])].push_back(q);
        if (t.root >= 0) {
            p.layers.push_back({t.root});
            p.depth[static_cast<size_t>(t.root)] = 0;
            while (true) {
                std::vector<int> next;
                for (int u : p.layers.back())
                    for (int v : kids[static_cast<size_t>(u)])
                        if (p.depth[static_cast<size_t>(v)] < 0) {
                            p.depth[static_cast<size_t>(v)] = static_cast<int>(p.layers.size());
                            next.push_back(v);
                        }
                if (next.empty()) break;
                // Children in their parents' order: few crossing edges.
                p.layers.push_back(next);
            }
        }
        size_t widest = 1;
        for (const auto& l : p.layers) widest = std::max(widest, l.size());
        p.w = std::max(140.0, static_cast<double>(widest) * dx + 2 * pad);
        p.h = head + static_cast<double>(p.layers.size()) * dy + pad;
        panels.push_back(std::move(p));
    }
    // Panels in rows of at most 1200 px.
    const double max_row = 1200;
    std::vector<std::pair<double, double>> at(panels.size());
    double x = 0, y = 0, row_h = 0, width = 0;
    for (size_t k = 0; k < panels.size(); ++k) {
        if (x > 0 && x + panels[k].w > max_row) {
            x = 0;
            y += row_h;
            row_h = 0;
        }
        at[k] = {x, y};
        x += panels[k].w;
        row_h = std::max(row_h, panels[k].h);
        width = std::max(width, x);
    }
    const double title_h = 28;
    const double height = y + row_h + title_h + (shown < static_cast<int>(trees.size()) ? 20 : 0);
    const std::string title = plan.algorithm + (plan.params.empty() ? "" : " " + plan.params) + ", P=" +
                              std::to_string(P) + ": " + std::to_string(trees.size()) +
                              " broadcast tree(s) of " + std::to_string(plan.nblocks) +
                              " blocks (edge label: step)";
    width = std::max(width, 8 + 7.2 * static_cast<double>(title.size()));
    std::string o;
    o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(std::max(width, 300.0)) +
         "\" height=\"" + num(height) + "\" font-family=\"sans-serif\" font-size=\"10\">\n";
    o += "<text x=\"4\" y=\"18\" font-size=\"13\">" + esc(title) + "</text>\n";
    for (int k = 0; k < shown; ++k) {
        const BlockTree& t = trees[static_cast<size_t>(k)];
        const Panel& p = panels[static_cast<size_t>(k)];
        const double ox = at[static_cast<size_t>(k)].first, oy = at[static_cast<size_t>(k)].second + title_h;
        std::string label = "block";
        if (t.blocks.size() > 1) label += "s";
        // Ranges of consecutive blocks: "0-31,64".
        std::string list = " ";
        for (size_t i = 0; i < t.blocks.size();) {
            size_t j = i;
            while (j + 1 < t.blocks.size() && t.blocks[j + 1] == t.blocks[j] + 1) ++j;
            if (i > 0) list += ",";
            list += std::to_string(t.blocks[i]);
            if (j > i) list += "-" + std::to_string(t.blocks[j]);
            i = j + 1;
        }
        o += "<g><title>" + esc(label + list) + "</title><rect x=\"" + num(ox + 2) + "\" y=\"" + num(oy) +
             "\" width=\"" + num(p.w - 4) + "\" height=\"" + num(p.h - 4) +
             "\" fill=\"none\" stroke=\"#ccc\"/>\n<text x=\"" + num(ox + 8) + "\" y=\"" + num(oy + 14) +
             "\">" + esc(shorten(label + list + ", root " + std::to_string(t.root),
                                  static_cast<size_t>(std::max(8.0, (p.w - 14) / 5.6)))) +
             "</text></g>\n";
        // Positions: layer by depth, centred.
        std::vector<std::pair<double, double>> pos(static_cast<size_t>(P), {-1, -1});
        for (size_t l = 0; l < p.layers.size(); ++l) {
            const auto& layer = p.layers[l];
            const double lw = static_cast<double>(layer.size()) * dx;
            for (size_t i = 0; i < layer.size(); ++i)
                pos[static_cast<size_t>(layer[i])] = {ox + (p.w - lw) / 2 + dx * (static_cast<double>(i) + 0.5),
                                                      oy + head + static_cast<double>(l) * dy};
        }
        for (int q = 0; q < P; ++q) {
            const int par = t.parent[static_cast<size_t>(q)];
            if (par < 0 || pos[static_cast<size_t>(q)].first < 0 || pos[static_cast<size_t>(par)].first < 0) continue;
            const auto [x1, y1] = pos[static_cast<size_t>(par)];
            const auto [x2, y2] = pos[static_cast<size_t>(q)];
            o += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1 + r) + "\" x2=\"" + num(x2) + "\" y2=\"" +
                 num(y2 - r) + "\" stroke=\"#1f5fa8\"/>";
            o += "<text x=\"" + num((x1 + x2) / 2 + 3) + "\" y=\"" + num((y1 + y2) / 2) +
                 "\" fill=\"#1f5fa8\" font-size=\"8\">" + std::to_string(t.step[static_cast<size_t>(q)]) +
                 "</text>\n";
        }
        for (int q = 0; q < P; ++q) {
            if (pos[static_cast<size_t>(q)].first < 0) continue;
            const auto [cx, cy] = pos[static_cast<size_t>(q)];
            o += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\" fill=\"" +
                 (q == t.root ? "#f4d35e" : "#fff") + "\" stroke=\"#333\"/><text x=\"" + num(cx) +
                 "\" y=\"" + num(cy + 3.5) + "\" text-anchor=\"middle\">" + std::to_string(q) + "</text>\n";
        }
    }
    if (shown < static_cast<int>(trees.size()))
        o += "<text x=\"4\" y=\"" + num(height - 6) + "\">" +
             std::to_string(static_cast<int>(trees.size()) - shown) + " more tree(s) not drawn</text>\n";
    o += "</svg>\n";
    return o;
}

}  // namespace genx
