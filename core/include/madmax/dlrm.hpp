// Recommendation models (DLRM, DLRM-DCNv2, DLRM-Transformer, DLRM-MoE): shape, embedding
// sharding plan and what the engine reports about them (docs/developer/workloads.md "DLRM").
#pragma once

#include <array>
#include <cstring>
#include <cstdint>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

namespace madmax {

/// How the dense features meet the pooled embeddings.
enum class DlrmInteraction : std::uint8_t {
    Dot,        ///< pairwise dot products of the F feature vectors (Naumov et al. 2019)
    Dcnv2,      ///< DCNv2 cross layers over the concatenated features (Wang et al. 2021)
    Transformer ///< transformer layers over the F feature vectors as tokens
};
std::string_view toString(DlrmInteraction k);

/// TorchRec's sharding types (docs/developer/workloads.md): each has its own lookups and collectives.
enum class EmbSharding : std::uint8_t {
    TableWise,    ///< whole tables on one GPU; pooled all-to-all
    RowWise,      ///< rows split over the group; reduce-scatter of partial sums
    ColumnWise,   ///< columns split into shards placed table-wise; all-to-all
    TableRowWise, ///< rows split inside a node, tables spread over nodes
    DataParallel  ///< replicated on every GPU; gradients all-reduced
};
inline constexpr int kEmbShardingCount = 5;
std::string_view toString(EmbSharding k);
std::optional<EmbSharding> parseEmbSharding(std::string_view s);

/// Optimizer of the embedding tables, fused into their backward (FBGEMM TBE).
enum class EmbOptimizer : std::uint8_t { RowwiseAdagrad, Adam, Sgd };
std::string_view toString(EmbOptimizer k);

/// `count` identical tables (a preset lists its tables in groups of equal shape).
struct EmbeddingTableGroup {
    std::string name;
    int count = 1;
    std::int64_t rows = 0;
    int dim = 0;
    double pooling = 1; ///< lookups per table per sample (multi-hot)
    double bytesPerElement = 4; ///< table precision
};

/// A sharding plan holds one type per table group, so a model has at most this many groups.
inline constexpr int kMaxTableGroups = 32;

struct DlrmShape {
    int denseFeatures = 0;
    std::vector<std::int64_t> bottomMlp; ///< widths; the last is the dense feature vector
    std::vector<std::int64_t> topMlp;    ///< widths; the last is the output (1 for CTR)
    DlrmInteraction interaction = DlrmInteraction::Dot;
    int dcnLayers = 0, dcnLowRank = 0;           ///< DCNv2: cross layers; rank 0 = full rank
    int transformerLayers = 0, transformerHeads = 0;
    int topExperts = 0, topK = 0; ///< DLRM-MoE: the top MLP as experts (0 = plain MLP)
    std::vector<EmbeddingTableGroup> tables;

    int tableCount() const;
    double tableParams() const; ///< Σ rows · dim
    /// Feature vectors meeting in the interaction: every table plus the bottom MLP's output.
    int featureCount() const { return tableCount() + 1; }
    /// Width of the interaction's output, the top MLP's input.
    double interactionOutput() const;
    /// Parameters of the dense part: MLPs, cross layers or transformer, experts.
    double denseParams() const;
    /// Forward FLOPs of the dense part for one sample.
    double denseForwardFlopsPerSample() const;
};

static_assert(sizeof(EmbSharding) == 1, "DlrmPlan compares its sharding types as bytes");

/// The embedding plan of a strategy (no allocation: fixed arrays, copied in the search).
struct DlrmPlan {
    std::array<EmbSharding, kMaxTableGroups> sharding{}; ///< per table group; default TW
    int groupSize = 0;          ///< 2-D sparse parallelism: shard over groups of this many GPUs
                                ///< and replicate across the groups (0 = all GPUs, one group)
    bool pipelineSparse = false; ///< TorchRec TrainPipelineSparseDist: the next batch's lookups
                                 ///< and all-to-alls overlap this batch's dense work
    /// One embedding module per table (the 2020 PyTorch DLRM examples' nn.Embedding list and
    /// per-table sparse optimizer steps) instead of one fused kernel for all tables (FBGEMM
    /// TBE, HugeCTR): the host issues a gather, a backward and an update per table.
    bool perTableKernels = false;
    int listed = 0; ///< types the file listed (0: one type for every group)
    bool operator==(const DlrmPlan& o) const {
        // The sharding types compared as one block of bytes (they are one-byte enums), not one
        // by one: every configuration a search tries asks whether its plan is the default.
        return groupSize == o.groupSize && pipelineSparse == o.pipelineSparse &&
               perTableKernels == o.perTableKernels && listed == o.listed &&
               std::memcmp(sharding.data(), o.sharding.data(), sizeof sharding) == 0;
    }
};

/// What the engine reports about the embeddings (critical = most loaded rank).
struct DlrmResult {
    bool active = false;
    int groupSize = 0, replicas = 0;
    double lookupBytesCritical = 0, lookupBytesMean = 0; ///< forward lookups per step, per GPU
    double lookupFwdS = 0, embBackwardS = 0;             ///< critical rank, per step
    double a2aFwdS = 0, a2aBwdS = 0;                     ///< pooled all-to-all per step
    double rowwiseCommS = 0;    ///< RW/TWRW reduce-scatter (fwd) + all-gather (bwd)
    double idsA2aS = 0;         ///< input ids to their row owners
    double replicaSyncS = 0;    ///< 2-D: embedding gradients all-reduced across replicas
    double dpTableSyncS = 0;    ///< DP tables' gradient all-reduce
    double sparseExposedS = 0;  ///< of all the above, what the critical rank waits on
    double denseForwardS = 0, denseBackwardS = 0, interactionS = 0;
    double eagerCopiesS = 0; ///< of interactionS + embBackwardS: per-table modules' copies
    double inputLoadS = 0;   ///< a synchronous loader's read and copy, GPU idle (per step)
    double denseAllReduceS = 0, denseAllReduceExposedS = 0;
    double tableBytesCritical = 0; ///< table shards + optimizer rows on the fullest GPU
    double tableBytesMean = 0;
    double tableWeightsBytes = 0; ///< of the memory's weights: the fullest GPU's table rows
    double imbalance = 1;       ///< critical ÷ mean sparse time
    double a2aBytesPerGpu = 0;  ///< forward pooled all-to-all send of the critical rank
};

} // namespace madmax
