#include "madmax/strategy_switches.hpp"

#include <array>

namespace madmax {

namespace {
using G = StrategySwitch::Group;
constexpr std::array kSwitches{
    StrategySwitch{"sequence_parallel", &Strategy::sequenceParallel, false, G::Parallelism,
                   "Sequence parallelism",
                   "Split norms and dropout along the sequence across TP ranks (Korthikanti et "
                   "al. 2022): reduce-scatter + all-gather replace the all-reduce."},
    StrategySwitch{"tp_comm_overlap", &Strategy::tpCommOverlap, false, G::Parallelism,
                   "TP communication overlap",
                   "Pipeline TP collectives with the adjacent GEMMs (Wang et al. ASPLOS 2023)."},
    StrategySwitch{"tp_grad_overlap", &Strategy::tpGradOverlap, true, G::Parallelism,
                   "Overlap TP gradient collectives",
                   "In the backward of QKV and MLP up, all-reduce (SP: reduce-scatter) the input "
                   "gradient while the weight-gradient GEMM runs, and with SP re-gather the "
                   "input while the input-gradient GEMM runs (Megatron-LM since 2021, "
                   "Transformer Engine). Off: in series (Megatron-LM of SC21)."},
    StrategySwitch{"dp_overlap", &Strategy::dpOverlap, true, G::Parallelism,
                   "Overlap gradient reduction",
                   "Bucketed gradient reduction overlapping the backward pass (PyTorch DDP)."},
    StrategySwitch{"cuda_graphs", &Strategy::cudaGraphs, false, G::Parallelism, "CUDA graphs",
                   "The step is captured in CUDA graphs: the host replays them in one launch "
                   "each, so the CPU time per kernel (GPU calibration host_op_us) never leaves "
                   "the GPU idle. Off: eager PyTorch, where small MoE layers can be host-bound."},
    StrategySwitch{"moe_a2a_overlap", &Strategy::moeA2aOverlap, false, G::MixtureOfExperts,
                   "Overlap all-to-all with another micro-batch",
                   "DualPipe / 1F1B all-to-all overlap: dispatch and combine hide behind another "
                   "micro-batch's compute, which loses the SMs the communication kernels hold "
                   "while they run."},
    StrategySwitch{"moe_fp8_dispatch", &Strategy::moeFp8Dispatch, false, G::MixtureOfExperts,
                   "FP8 dispatch",
                   "Send the dispatched tokens in FP8 (+ a scale per 128 channels); the combine "
                   "stays 16-bit (DeepEP)."},
    StrategySwitch{"moe_fused_mlp", &Strategy::moeFusedMlp, false, G::MixtureOfExperts,
                   "Fused grouped-MLP kernels",
                   "Transformer Engine's CuTe DSL grouped MLP (Megatron-Core "
                   "cutedsl_fused_grouped_mlp): the activation, its clamp, bias and routing "
                   "weight in the GEMM epilogues, and the token counts kept on the GPU (no host "
                   "sync at the router). Off: Megatron-Core's separate activation passes."},
};
} // namespace

std::span<const StrategySwitch> strategySwitches() { return kSwitches; }

const StrategySwitch* findStrategySwitch(std::string_view key) {
    for (const StrategySwitch& sw : kSwitches)
        if (sw.key == key) return &sw;
    return nullptr;
}

} // namespace madmax
