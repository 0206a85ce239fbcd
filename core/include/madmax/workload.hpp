// What is being done: training (global batch, sequence length, precision, optimizer) or
// inference serving (request lengths, batch, precisions of weights, activations and KV cache).
#pragma once

#include "madmax/dlrm.hpp"
#include "madmax/types.hpp"

namespace madmax {

enum class WorkloadKind : std::uint8_t { Training, Inference };

/// How request output lengths vary around their mean (input lengths are taken as their mean).
enum class LengthDistribution : std::uint8_t { Fixed, Uniform, Exponential };
std::string_view toString(LengthDistribution d);

/// Offline: every request is available (maximum throughput). Server: requests arrive; the batch
/// is the largest that meets the latency objectives.
enum class ServingMode : std::uint8_t { Offline, Server };

enum class ServingPhase : std::uint8_t { Aggregated, Prefill, Decode };
std::string_view toString(ServingPhase p);
/// Where a prefix cache keeps the KV of its hits: resident in the GPU's memory, or in an
/// offload tier (host memory, or storage at a rate given) from which a hit's KV is loaded into
/// the GPU before the prompt's computed part attends to it.
enum class PrefixCacheTier : std::uint8_t { Gpu, Host };
std::string_view toString(PrefixCacheTier t);
/// How an MLA model's decode attends its cached latents (DeepSeek-V2, Liu et al. 2024, §2.1.2):
/// absorbed — W_UK folded into the query and W_UV into the output, attention over the latent
/// itself (FlashMLA, SGLang, TensorRT-LLM, vLLM ≥ 0.7) — or expanded: every step up-projects
/// each cached latent to the heads' keys and values and runs a standard attention over them
/// (the naive form; vLLM's first MLA decode).
enum class MlaDecode : std::uint8_t { Absorbed, Expanded };
std::string_view toString(MlaDecode m);

struct InferenceWorkload {
    int inputTokens = 0;  ///< mean prompt length
    int outputTokens = 0; ///< mean generated length
    LengthDistribution outputDistribution = LengthDistribution::Fixed;
    int batch = 0; ///< concurrent sequences per replica; 0 = the largest that fits
    Precision weightPrecision = Precision::BF16;
    Precision kvPrecision = Precision::BF16;
    ServingMode mode = ServingMode::Offline;
    double ttftObjectiveS = 0;     ///< 0 = none
    double tpotObjectiveS = 0;     ///< 0 = none
    int prefillChunkTokens = 8192; ///< tokens batched into one prefill pass (chunked prefill)
    /// Which pool the scenario's GPUs are (prefill/decode disaggregation, DistServe, Zhong et
    /// al. OSDI 2024): both phases on every GPU, or only prompts (the KV cache then leaves over
    /// the scale-out network), or only generation (the KV cache arrives from a prefill pool).
    ServingPhase phase = ServingPhase::Aggregated;
    /// Share of each prompt's tokens whose KV cache a prefix cache already holds: their prefill
    /// compute is skipped, not their KV memory or the context later tokens attend.
    double prefixCacheHit = 0;
    /// Where the hits' KV is kept (Gpu: no load), and, for the Host tier, the rate per GPU at
    /// which it loads (bytes/s; 0: the system's host link, host_link_gbps).
    PrefixCacheTier prefixCacheTier = PrefixCacheTier::Gpu;
    double prefixCacheLoadBytesPerS = 0;
    /// A finite benchmark (trtllm-bench's --num-requests): this many fixed-length requests,
    /// all queued at the start, served in waves of the batch; throughput is their output tokens
    /// over the makespan. 0: an endless stream, the steady state.
    long long requests = 0;
    /// The deployment's mean load: the share of its capacity the traffic uses, averaged over
    /// the period a throughput is quoted for (a day's diurnal swing, an operator's headroom).
    /// 1: saturated, the steady state at capacity. Below 1, a prefill pool is busy that share
    /// of the time (its passes unchanged, idle between); a decode pool or aggregated replica
    /// holds that share of the batch it runs at capacity (at least one sequence), so its
    /// rounds are shorter. Throughput and cost per token are the period's averages; energy
    /// per token counts board power throughout (an upper bound over the idle share).
    double meanLoad = 1;
    MlaDecode mlaDecode = MlaDecode::Absorbed; ///< MLA models only
    /// Speculative decoding / multi-token prediction: draft tokens proposed per step (0: off),
    /// the chance each is accepted, and the draft's layers (DeepSeek-V3's MTP module: one).
    int draftTokens = 0;
    double acceptanceRate = 0.85; ///< DeepSeek-V3 report §5.4.3: 85–90% for the second token
    int draftLayers = 1;
    /// Tokens each sequence gains per verify step: (1 − α^(k+1)) / (1 − α), Leviathan et al.
    /// ICML 2023 eq. (1) (k + 1 when every draft is accepted; 1 without speculation).
    double tokensPerStep() const;
};

/// Fine-tuning: the components whose weights are frozen. A frozen component computes no weight
/// gradients, reduces none and keeps no optimizer state or gradient buffer; activation
/// gradients still flow through it when something below it trains. Nothing frozen is
/// pre-training.
/// Which linear layers carry LoRA adapters.
enum class LoraTargets : std::uint8_t { All, Attention, Mlp };
std::string_view toString(LoraTargets t);

struct Frozen {
    int firstLayer = 0; ///< frozen transformer layers: [firstLayer, firstLayer + layers)
    int layers = 0;
    bool embedding = false; ///< token or patch embedding (DLRM: the embedding tables)
    bool head = false;      ///< final norm and LM head or classifier
    bool bottomMlp = false; ///< DLRM only
    bool topMlp = false;    ///< DLRM only (with the interaction's weights, if any)
    /// LoRA (Hu et al. 2021): rank-r adapters A·B beside the frozen base's linear layers (the
    /// whole base frozen: embedding, every layer, head); only the adapters train. 0 = none.
    int loraRank = 0;
    LoraTargets loraTargets = LoraTargets::All;
    /// LoRA: bytes per parameter of the frozen base's layer weights (2: bf16; 1: fp8; QLoRA's
    /// NF4 with double quantization: 4.127 bits, Dettmers et al. 2023 §3). Below 2 each use of
    /// a weight dequantizes it to bf16 first (embedding and head stay 16-bit).
    double loraBaseBytes = 2.0;

    bool lora() const { return loraRank > 0; }
    bool any() const {
        return layers > 0 || embedding || head || bottomMlp || topMlp || loraRank > 0;
    }
    bool layerFrozen(int layer) const {
        return layer >= firstLayer && layer < firstLayer + layers;
    }
    /// Frozen layers in [begin, end).
    int frozenIn(int begin, int end) const {
        const int lo = begin > firstLayer ? begin : firstLayer;
        const int hi = end < firstLayer + layers ? end : firstLayer + layers;
        return hi > lo ? hi - lo : 0;
    }
    /// Whether activation gradients must flow through the frozen layers: something below them
    /// (the embedding or an earlier layer) trains. If not, they run no backward at all.
    bool frozenLayersNeedDgrad() const { return !embedding || firstLayer > 0 || loraRank > 0; }
    /// Whether the head must pass gradients down: something below it trains (the embedding, a
    /// layer, or LoRA adapters). Not so for a linear probe.
    bool belowHeadTrains(int modelLayers) const {
        return !(embedding && firstLayer == 0 && layers >= modelLayers) || loraRank > 0;
    }
};

struct Workload {
    WorkloadKind kind = WorkloadKind::Training;
    int globalBatch = 0; ///< sequences per optimizer step
    int seqLen = 0;
    Precision precision = Precision::BF16; ///< GEMM math precision (activations, in inference)
    Precision gradReducePrecision = Precision::BF16;
    Optimizer optimizer = Optimizer::Adam;
    AttentionKernel attention = AttentionKernel::Flash;
    /// Training below 16 bits: how GEMM inputs are scaled and cast (their memory passes).
    LowPrecisionScaling lowPrecisionScaling = LowPrecisionScaling::Delayed;
    /// DLRM: the embedding tables' optimizer, fused into their backward.
    EmbOptimizer embOptimizer = EmbOptimizer::RowwiseAdagrad;
    /// Framework time per optimizer step that no op accounts for (data loading, Python,
    /// logging): added to every step. 0 by default; a measured per-step overhead goes here.
    double stepOverheadS = 0;
    /// Framework time per micro-batch (Python scheduling, hooks) no op accounts for: added
    /// once per micro-batch of the critical stage. 0 by default.
    double microBatchOverheadS = 0;
    /// DLRM: the training loop reads each batch itself, after the previous step's loss read
    /// back and before its first kernel (a loader without workers or prefetch, as PyTorch's
    /// DataLoader with num_workers = 0): the batch's records come off storage at this rate and
    /// cross to the GPU over system.host_link_gbps, with the GPU idle. 0: a prefetching loader
    /// hides it (the default).
    double inputReadBytesPerS = 0;
    Frozen frozen;               ///< fine-tuning (training only)
    InferenceWorkload inference; ///< used when kind == Inference
};

} // namespace madmax
