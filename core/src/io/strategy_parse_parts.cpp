// The DLRM embedding plan of a strategy (strategy_parse_parts.hpp).
#include "io/strategy_parse_parts.hpp"

#include "madmax/error.hpp"

namespace madmax::detail {

using nlohmann::json;

void parseEmbPlan(ObjectReader& r, const std::string& file, Strategy& st) {
    if (r.has("emb_sharding")) {
        const json& e = r.raw("emb_sharding");
        const std::string at = r.pathOf("emb_sharding");
        const std::string help = "one of tw, rw, cw, twrw, dp, or a list with one per table group";
        r.record("emb_sharding", help);
        auto one = [&](const json& v, const std::string& where) {
            const auto k = v.is_string() ? parseEmbSharding(v.get<std::string>()) : std::nullopt;
            if (!k) throw InputError(file, where, "expected " + help + ", got " + v.dump());
            return *k;
        };
        if (e.is_array()) {
            if (e.empty() || e.size() > std::size_t(kMaxTableGroups))
                throw InputError(file, at, "expected 1 to " + std::to_string(kMaxTableGroups) +
                                               " types, one per table group");
            for (std::size_t i = 0; i < e.size(); ++i)
                st.dlrm.sharding[i] = one(e[i], at + "[" + std::to_string(i) + "]");
            st.dlrm.listed = int(e.size());
        } else {
            st.dlrm.sharding.fill(one(e, at));
        }
    } else {
        r.ignore("emb_sharding");
    }
    st.dlrm.groupSize = int(r.integer("emb_group_size", 0, 1 << 30, 0));
    r.record("emb_group_size", "2-D sparse parallelism: GPUs per sharding group (0 = all)");
    st.dlrm.pipelineSparse = r.boolean("sparse_pipeline", false);
    st.dlrm.perTableKernels = r.choice("emb_kernels", {"fused", "per_table"}, "fused") == "per_table";
    r.record("emb_kernels", "DLRM embedding kernels: fused (one for all tables: FBGEMM TBE, "
                            "HugeCTR) or per_table (one embedding module per table, eager)");
}

} // namespace madmax::detail
