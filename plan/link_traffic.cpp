// Bytes per link class (link_traffic.hpp).
#include "plan/link_traffic.hpp"

#include <queue>

#include "plan/hops.hpp"
#include "plan/registry.hpp"

namespace genx {

namespace {

const std::string& class_name(const TopologyView& v, int cls, const std::string& fallback) {
    return cls >= 0 && static_cast<size_t>(cls) < v.link_classes.size() ? v.link_classes[static_cast<size_t>(cls)].name
                                                                      : fallback;
}

// Class names of the links from host a to host b, appended to `out`.
class Router {
  public:
    explicit Router(const TopologyView& v) : v_(v) {
        if (!v.direct) {
            depth_.assign(v.nodes.size(), 0);
            for (int n : preorder(v.nodes, 0))
                if (v.nodes[static_cast<size_t>(n)].parent >= 0)
                    depth_[static_cast<size_t>(n)] = depth_[static_cast<size_t>(v.nodes[static_cast<size_t>(n)].parent)] + 1;
        } else {
            adj_.resize(v.nodes.size());
            for (size_t i = 0; i < v.links.size(); ++i) {
                adj_[static_cast<size_t>(v.links[i].a)].emplace_back(v.links[i].b, static_cast<int>(i));
                adj_[static_cast<size_t>(v.links[i].b)].emplace_back(v.links[i].a, static_cast<int>(i));
            }
        }
    }

    void route(int a, int b, std::vector<std::string>* out) {
        out->clear();
        if (!v_.direct) {
            while (a != b) {
                int& deeper = depth_[static_cast<size_t>(a)] >= depth_[static_cast<size_t>(b)] ? a : b;
                const TopoNode& n = v_.nodes[static_cast<size_t>(deeper)];
                out->push_back(class_name(v_, n.up_class, "link"));
                deeper = n.parent;
            }
            return;
        }
        const std::vector<int>& parent_link = tree_from(b);
        // Walk from a towards b along the breadth-first tree rooted at b.
        while (a != b && parent_link[static_cast<size_t>(a)] >= 0) {
            const TopoLink& l = v_.links[static_cast<size_t>(parent_link[static_cast<size_t>(a)])];
            out->push_back(class_name(v_, l.cls, "link"));
            a = l.a == a ? l.b : l.a;
        }
    }

  private:
    // Per node: the link towards `root` on a shortest path (-1 at the root
    // and where unreachable), one search per destination, cached.
    const std::vector<int>& tree_from(int root) {
        auto it = trees_.find(root);
        if (it != trees_.end()) return it->second;
        std::vector<int> via(v_.nodes.size(), -1), seen(v_.nodes.size(), 0);
        std::queue<int> q;
        q.push(root);
        seen[static_cast<size_t>(root)] = 1;
        while (!q.empty()) {
            const int u = q.front();
            q.pop();
            for (const auto& [w, link] : adj_[static_cast<size_t>(u)])
                if (!seen[static_cast<size_t>(w)]) {
                    seen[static_cast<size_t>(w)] = 1;
                    via[static_cast<size_t>(w)] = link;
                    q.push(w);
                }
        }
        return trees_.emplace(root, std::move(via)).first->second;
    }

    const TopologyView& v_;
    std::vector<int> depth_;
    std::vector<std::vector<std::pair<int, int>>> adj_;
    std::map<int, std::vector<int>> trees_;
};

}  // namespace

Status link_traffic(const RankGenerator& gen, size_t count, size_t elem_size, const TopologyView& view,
                    LinkTraffic* out) {
    const int P = gen.header.nranks;
    if (view.empty() || view.nranks() != P)
        return Status::invalid("link traffic: the topology places " + std::to_string(view.nranks()) +
                               " ranks, the plan has " + std::to_string(P));
    const std::vector<int> host = view.host_of_rank();
    const std::string intra = view.intra_class >= 0 ? class_name(view, view.intra_class, "intra") : "intra";
    Router router(view);
    LinkTraffic t;
    std::vector<std::string> classes;
    for (int r = 0; r < P; ++r) {
        const Program prog = gen.program(r);
        for (const Step& st : prog.steps)
            for (const Transfer& x : st.sends) {
                size_t elems = 0;
                for (int b : x.blocks) elems += block_elems(count, gen.header.nblocks, b);
                const double bytes = static_cast<double>(elems * elem_size);
                const int ha = host[static_cast<size_t>(r)], hb = host[static_cast<size_t>(x.peer)];
                if (ha == hb) {
                    t.class_bytes[intra] += bytes;
                    continue;
                }
                router.route(ha, hb, &classes);
                for (const std::string& c : classes) t.class_bytes[c] += bytes;
            }
    }
    *out = std::move(t);
    return Status::ok();
}

}  // namespace genx
