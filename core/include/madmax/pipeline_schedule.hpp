// Pipeline schedules as objects: each owns its bubble, its in-flight micro-batches (activation
// memory), the parameter copies a GPU holds, the lower bound the search prunes with, and its
// validity rules. The step assembly, the memory model, the search and the scenario check read
// these, so adding a schedule is one entry in the table (docs/developer/architecture.md).
#pragma once

#include "madmax/strategy.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace madmax {

/// One micro-batch on the critical stage, the terms the papers write bubbles in: F (forward
/// chunk, with its point-to-point), B (the whole backward chunk, input and weight gradients,
/// with its point-to-point) and W (of B, the weight-gradient part).
struct ChunkTimes {
    double forward = 0, backward = 0, weightGrad = 0;
};

struct ScheduleModel {
    PipelineSchedule kind;
    std::string_view name;   ///< the scenario's strategy.schedule value
    std::string_view source; ///< where its formulas come from
    /// Idle seconds of the critical stage per step (fill and drain, and any wait a schedule adds
    /// between its `microBatches` micro-batches).
    double (*bubbleS)(const Strategy& st, const ChunkTimes& c, int microBatches);
    /// Micro-batches whose activations pipeline stage `stage` holds at its peak, in units of one
    /// micro-batch through the stage's layers.
    double (*inFlight)(const Strategy& st, int microBatches, int stage);
    /// Copies of its stage's parameters a GPU holds (DualPipe: two, one per direction).
    int paramCopies;
    /// Whether its bubble reads W (the weight-gradient time): the engine computes it only then.
    bool usesWeightGrad;
    /// A lower bound on step ÷ (m micro-batches' forward and backward): the search's pruning
    /// bound must never exceed what bubbleS gives.
    double (*stretchBound)(const Strategy& st, int microBatches);
    /// Why this schedule cannot run `st` with `microBatches` per replica (nullopt: it can).
    std::optional<std::string> (*explainInvalid)(const Strategy& st, int microBatches);
    /// Share of the steady state's expert all-to-all hidden behind the paired chunk's compute
    /// (DualPipe overlaps a forward and a backward chunk of two micro-batches).
    double (*hiddenExpertShare)(const Strategy& st, int microBatches);
};

/// The schedule's model; every PipelineSchedule has one.
const ScheduleModel& scheduleModel(PipelineSchedule s);
/// Every schedule, in the order the parser and the explorer list them.
std::span<const ScheduleModel> scheduleModels();
/// Their names for a message: "1f1b, interleaved, …, dualpipe or deepspeed".
std::string scheduleNameList();

} // namespace madmax
