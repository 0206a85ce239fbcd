// What the engine predicts for one scenario.
#pragma once

#include "madmax/dlrm.hpp"
#include "madmax/types.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace madmax {

namespace detail::serving {
class PrefillMemo;
}

/// What evaluate() lays out beyond the figures.
struct EvaluateOptions {
    bool timeline = false; ///< also lay out the critical stage's ops for a chart (allocates)
    /// Internal to the serving search (leave null): prefill passes and replicas' weight GEMMs
    /// kept across configurations that differ in nothing but what serving/costs.hpp's
    /// PrefillMemo keys leave out.
    detail::serving::PrefillMemo* prefillMemo = nullptr;
};

struct CommTime {
    double serializedS = 0; ///< time the collective occupies its stream, summed over the step
    double exposedS = 0;    ///< time the compute stream waited on it (not hidden by overlap)
};

struct ComputeBreakdown {
    double forwardS = 0;
    double backwardS = 0;
    double recomputeS = 0;
    double optimizerS = 0;
    /// Of forward + backward + recompute: the GPU idle waiting for the host to launch kernels
    /// (eager mode; 0 with CUDA graphs or a host_op_us of 0).
    double hostStallS = 0;
    double hostStallForwardS = 0; ///< the part of hostStallS inside forwardS (the rest: backward)
    /// Of forward + backward: the GPU waiting for offloaded activations to reach host memory
    /// (forward) or come back (backward) where the copy outlasts the layers it overlaps.
    double offloadWaitS = 0;
    double offloadWaitForwardS = 0; ///< the part of offloadWaitS inside forwardS
    double totalS() const { return forwardS + backwardS + recomputeS + optimizerS; }
};

struct MemoryBreakdown {
    double weightsBytes = 0;
    double gradsBytes = 0;
    double optimizerBytes = 0;
    double activationsBytes = 0;
    double kvCacheBytes = 0; ///< inference only
    double reserveBytes = 0;
    double capacityBytes = 0;
    double totalBytes() const {
        return weightsBytes + gradsBytes + optimizerBytes + activationsBytes + kvCacheBytes +
               reserveBytes;
    }
    double marginBytes() const { return capacityBytes - totalBytes(); }
    bool fits() const { return totalBytes() <= capacityBytes; }
};

enum class Lane : std::uint8_t { Compute, Comm, DataParallelComm };

/// What an event on the timeline is, for colouring it.
enum class TimelineKind : std::uint8_t {
    Forward,
    Backward,
    Recompute,
    Optimizer,
    Bubble,
    Comm,
    Steady,
    HostIdle, ///< the compute stream waiting for the host to issue kernels
    Wait,     ///< the compute stream waiting for communication (exposed; drawn as a gap)
    Embedding ///< DLRM: embedding lookups, and their fused backward + update
};

/// "forward", "wait", "host_idle", …: the timeline JSON's "kind".
std::string_view toString(TimelineKind k);

/// One op on one stream of the critical pipeline stage, for a timeline chart.
struct TimelineEvent {
    std::string label;
    Lane lane;
    TimelineKind kind;
    double startS;
    double endS;
    bool isComm;
    ParallelDim dim; ///< meaningful when isComm
    Collective collective;
};

/// Serving metrics (inference workloads), per replica unless said otherwise.
struct InferenceResult {
    double ttftS =
        0; ///< time to first token: prefill of the prompt + wait for the running iteration
    double tpotS = 0;            ///< time per output token: one iteration of continuous batching
    double e2eLatencyS = 0;      ///< TTFT + (output - 1) × TPOT
    double outputTokensPerS = 0; ///< whole system (every replica)
    double outputTokensPerSPerGpu = 0;
    double requestsPerS = 0;  ///< whole system
    int batch = 0;            ///< concurrent sequences per replica in steady state
    int maxBatchThatFits = 0; ///< by KV-cache memory
    bool meetsObjectives = true;
    // KV cache (per GPU).
    double kvBytesPerToken = 0;    ///< all layers this GPU holds
    double kvBytesPerSequence = 0; ///< reserved per admitted sequence (prompt + output)
    // One decode iteration split by cause (seconds): what a token costs and why.
    double decodeWeightReadS = 0, decodeKvReadS = 0, decodeComputeS = 0, decodeCommS = 0,
           decodeOverheadS = 0;
    double prefillPerIterationS = 0; ///< prefills of new requests interleaved into each iteration
    // Prefill of one prompt (the service part of TTFT).
    double prefillComputeS = 0, prefillCommS = 0, prefillOverheadS = 0;
    double prefillAllToAllS = 0; ///< of prefillCommS: MoE dispatch and combine
    double decodeS() const {
        return decodeWeightReadS + decodeKvReadS + decodeComputeS + decodeCommS + decodeOverheadS;
    }
    /// Both sides of the decode round's rooflines, whichever bound (a bound side shows above as
    /// weight/KV reads or compute; the other side here says how close it came): GEMMs' weight
    /// reads and math, the attention core's KV-cache reads and math.
    double decodeWeightSideS = 0, decodeGemmSideS = 0, decodeKvSideS = 0, decodeAttentionSideS = 0;
    /// Speculative decoding: tokens a sequence gains per decode round, and the round's draft time.
    double tokensPerStep = 1, draftS = 0;
    /// Disaggregation: one prompt's KV cache sent prefill → decode pool (bytes and seconds, per
    /// GPU, over the scale-out network); 0 when aggregated.
    double kvTransferBytes = 0, kvTransferS = 0;
    /// An offloaded prefix cache: one prompt's hits' KV loaded into each GPU (seconds; the load
    /// overlaps its prefill layer by layer); 0 when the hits stay in GPU memory.
    double prefixLoadS = 0;
    double prefixLoadWaitS = 0; ///< of TTFT: the prompt waiting on that load (what it did not hide)
    double prefixLoadBytesPerS = 0; ///< the tier's read rate it loaded at (0: no load)
    /// A finite benchmark (workload requests): its makespan and the waves it ran in; 0 for an
    /// endless stream (throughput is then the steady state's).
    double makespanS = 0;
    int waves = 0;
    double inputTokensPerS = 0; ///< prefill pool: prompt tokens per second, cache hits included
    /// A prefill pool's result: its throughput is prompt tokens and it paces no output tokens
    /// (no TPOT; its round's figures are not its own).
    bool prefillPool() const { return inputTokensPerS > 0; }
    /// Prefill pool: the share of its capacity it runs at (workload mean_load, or less where a
    /// server-mode TTFT objective caps it), and of TTFT the mean wait for the pool at that load.
    double poolLoad = 1, prefillQueueS = 0;
    double dollarsPerMillionTokens = 0; ///< the GPUs' hourly price over the tokens served
    double joulesPerToken = 0;          ///< the GPUs' board power over the tokens served
};

/// Mixture-of-experts figures of the critical rank (when the model is MoE).
struct MoeResult {
    bool active = false;
    int localExperts = 0;           ///< routed experts per GPU: E / EP
    long long expertDataParallel = 0; ///< EDP = TP·CP·DP / (ETP·EP)
    double routedCopiesPerGpu = 0;  ///< token copies one GPU's experts process per micro-batch
    double dispatchS = 0, combineS = 0; ///< one all-to-all call each, one layer, forward
    double dispatchScaleUpBytes = 0, dispatchScaleOutBytes = 0; ///< per GPU, one dispatch
    double combineScaleUpBytes = 0, combineScaleOutBytes = 0;   ///< per GPU, one combine
    double a2aPerStepS = 0;        ///< dispatch + combine, forward and backward, whole step
    double a2aExposedPerStepS = 0; ///< of which the compute stream waited on
    double tokenDropRate = 0;      ///< share of routed copies the capacity factor drops
    double expertWeightsBytes = 0; ///< routed experts' 16-bit weights on the worst stage, per GPU
};

struct Result {
    double stepTimeS = 0;
    double samplesPerS = 0;
    double tokensPerS = 0;
    double tokensPerSPerGpu = 0;
    double modelFlopsPerStep =
        0; ///< Megatron/PaLM convention: 3 x forward, full (non-causal) attention
    double hardwareFlopsPerStep = 0; ///< as model FLOPs, plus recomputed forward work
    double modelTflopsPerGpu = 0;
    double hardwareTflopsPerGpu = 0;
    double mfu = 0;
    double hfu = 0;

    ComputeBreakdown compute; ///< busy time of the critical stage's compute stream
    double computeS = 0;      ///< compute.totalS()
    double exposedCommS = 0;  ///< Σ exposed over every collective
    double bubbleS = 0;       ///< pipeline fill/drain and stage imbalance
    /// Step time no op accounts for, as the scenario states it: workload.step_overhead_ms, plus
    /// micro_batch_overhead_ms per micro-batch, plus (DLRM) a synchronous loader's input read.
    /// Every training step is computeS + exposedCommS + bubbleS + overheadS.
    double overheadS = 0;
    /// comm[dim][collective]
    std::array<std::array<CommTime, kCollectiveCount>, kParallelDimCount> comm{};

    MemoryBreakdown memory;
    int criticalStage = 0; ///< 0 = first, pp-1 = last
    int microBatches = 0;  ///< per DP replica per step
    double forwardPerMicroBatchS =
        0; ///< wall time of one micro-batch forward on the critical stage
    double backwardPerMicroBatchS = 0; ///< wall time of one micro-batch backward (incl. recompute)

    bool isInference = false;
    InferenceResult inference; ///< when isInference
    MoeResult moe;             ///< when the model is a mixture of experts
    DlrmResult dlrmResult;     ///< when the model is a recommendation model

    /// Filled only when EvaluateOptions::timeline is set (it allocates).
    std::vector<TimelineEvent> timeline;

    const CommTime& commTime(ParallelDim d, Collective c) const {
        return comm[static_cast<int>(d)][static_cast<int>(c)];
    }
    CommTime dimTotal(ParallelDim d) const;
    CommTime collectiveTotal(Collective c) const;
    double serializedCommS() const;
};

} // namespace madmax
