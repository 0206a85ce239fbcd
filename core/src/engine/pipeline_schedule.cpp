// The pipeline schedules' formulas (madmax/pipeline_schedule.hpp), each from its paper.
#include "madmax/pipeline_schedule.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace madmax {
namespace {

std::string str(long long v) { return std::to_string(v); }

// 1F1B (Narayanan et al. SC21 §2.2): (p − 1) chunks' forward and backward of fill and drain;
// stage i holds min(p − i, m) micro-batches' activations.
double oneFOneBBubble(const Strategy& st, const ChunkTimes& c, int = 0) {
    return st.pp > 1 ? double(st.pp - 1) * (c.forward + c.backward) : 0.0;
}
double oneFOneBInFlight(const Strategy& st, int microBatches, int stage) {
    return std::min(st.pp - stage, microBatches);
}
double oneFOneBBound(const Strategy& st, int microBatches) {
    return 1.0 + double(st.pp - 1) / microBatches;
}
std::optional<std::string> oneChunkOnly(const Strategy& st, int) {
    if (st.vp > 1)
        return "strategy.vp = " + str(st.vp) + " needs strategy.schedule = \"interleaved\"";
    return std::nullopt;
}
double noneHidden(const Strategy&, int) { return 0.0; }

// Interleaved 1F1B (SC21 §2.2): the bubble ÷ v; stage i holds its 1F1B count times
// 1 + (p − 1)/(p·v) (Korthikanti et al. MLSys 2023 §4.2.3).
double interleavedBubble(const Strategy& st, const ChunkTimes& c, int) {
    return oneFOneBBubble(st, c) / st.vp;
}
double interleavedInFlight(const Strategy& st, int microBatches, int stage) {
    const double held = oneFOneBInFlight(st, microBatches, stage);
    return st.pp > 1 ? held * (1.0 + double(st.pp - 1) / (double(st.pp) * st.vp)) : held;
}
double interleavedBound(const Strategy& st, int microBatches) {
    return 1.0 + double(st.pp - 1) / (double(st.vp) * microBatches);
}
std::optional<std::string> interleavedRules(const Strategy& st, int microBatches) {
    if (st.vp < 2)
        return "strategy.schedule \"interleaved\" needs vp ≥ 2 model chunks per GPU (got " +
               str(st.vp) + "); with one chunk the schedule is \"1f1b\"";
    if (st.pp > 1 && microBatches % st.pp != 0)
        return "the interleaved schedule needs the micro-batches per replica (" +
               str(microBatches) + ") to be a multiple of pp (" + str(st.pp) +
               ") (Narayanan et al. SC21 §2.2)";
    return std::nullopt;
}

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3.1; DeepSeek-V3 report
// Table 2): weight gradients deferred into the drain, bubble (p − 1)(F + B − 2W) at 1F1B's
// activation memory.
double zeroBubbleBubble(const Strategy& st, const ChunkTimes& c, int) {
    if (st.pp < 2) return 0.0;
    return double(st.pp - 1) * std::max(0.0, c.forward + c.backward - 2.0 * c.weightGrad);
}
double noBound(const Strategy&, int) { return 1.0; } // W can take the whole bubble

// DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, §3.2.1 and Table 2): micro-batches
// fed from both ends, each GPU holding two stages (2× parameters), activations of p + 1
// micro-batches, bubble (p/2 − 1)(F&B + B − 3W) where F&B, a forward and a backward chunk of
// two micro-batches run together, costs F + B of compute with their all-to-all and
// point-to-point hidden behind each other.
double dualPipeBubble(const Strategy& st, const ChunkTimes& c, int) {
    if (st.pp < 2) return 0.0;
    const double fAndB = c.forward + c.backward;
    return double(st.pp / 2 - 1) * std::max(0.0, fAndB + c.backward - 3.0 * c.weightGrad);
}
double dualPipeInFlight(const Strategy& st, int microBatches, int) {
    return std::min(st.pp + 1, microBatches);
}
std::optional<std::string> dualPipeRules(const Strategy& st, int microBatches) {
    if (st.vp > 1)
        return "strategy.schedule \"dualpipe\" runs one chunk per direction: strategy.vp = " +
               str(st.vp) + " must be 1";
    if (st.pp < 2 || st.pp % 2 != 0)
        return "strategy.schedule \"dualpipe\" needs an even pp ≥ 2 (got " + str(st.pp) +
               "): micro-batches enter from both ends (DeepSeek-V3 report §3.2.1)";
    if (microBatches % 2 != 0 || microBatches < st.pp)
        return "strategy.schedule \"dualpipe\" needs an even number of micro-batches per replica, "
               "at least pp (" + str(st.pp) + "); got " + str(microBatches);
    return std::nullopt;
}
// The fill and drain, about p chunks, run unpaired; the other m − p are overlapped pairs.
double dualPipeHidden(const Strategy& st, int microBatches) {
    return microBatches > st.pp ? double(microBatches - st.pp) / microBatches : 0.0;
}

// DeepSpeed's pipeline engine (TrainSchedule in deepspeed/runtime/pipe/schedule.py, its sends
// and receives blocking in p2p.py; v0.5.4, October 2021, the Megatron-DeepSpeed runs of
// MT-NLG and BLOOM): 2(m + p − 1) slots, even stages running a forward while odd ones run a
// backward and the other way round; a forward slot opens with a blocking exchange with the
// stage before, a backward slot with the stage after, so neighbours stay in step and a slot
// lasts the longer of F and B wherever both run: p slots of fill
// hold forwards only, the other 2m + p − 2 the longer chunk. Over m(F + B) of work that is
// 1F1B's (p − 1)(F + B) plus (m − 1)|B − F|: each micro-batch's shorter chunk waits out a
// neighbour's longer one. Stage i holds min(p − i + 1, m) micro-batches (num_pipe_buffers).
double deepSpeedBubble(const Strategy& st, const ChunkTimes& c, int microBatches) {
    if (st.pp < 2) return 0.0;
    return oneFOneBBubble(st, c) +
           double(std::max(0, microBatches - 1)) * std::abs(c.backward - c.forward);
}
double deepSpeedInFlight(const Strategy& st, int microBatches, int stage) {
    return std::min(st.pp - stage + 1, microBatches);
}

constexpr std::array<ScheduleModel, kPipelineScheduleCount> kSchedules{{
    {PipelineSchedule::OneFOneB, "1f1b", "Narayanan et al. SC21 §2.2", oneFOneBBubble,
     oneFOneBInFlight, 1, false, oneFOneBBound, oneChunkOnly, noneHidden},
    {PipelineSchedule::Interleaved, "interleaved", "Narayanan et al. SC21 §2.2",
     interleavedBubble, interleavedInFlight, 1, false, interleavedBound, interleavedRules,
     noneHidden},
    {PipelineSchedule::ZeroBubble, "zero_bubble", "Qi et al. ICLR 2024 §3.1 (ZB-H1)",
     zeroBubbleBubble, oneFOneBInFlight, 1, true, noBound, oneChunkOnly, noneHidden},
    {PipelineSchedule::DualPipe, "dualpipe", "DeepSeek-V3 report §3.2.1, Table 2",
     dualPipeBubble, dualPipeInFlight, 2, true, noBound, dualPipeRules, dualPipeHidden},
    {PipelineSchedule::DeepSpeed, "deepspeed",
     "DeepSpeed TrainSchedule (deepspeed/runtime/pipe/schedule.py, v0.5.4)", deepSpeedBubble,
     deepSpeedInFlight, 1, false, oneFOneBBound, oneChunkOnly, noneHidden},
}};

} // namespace

// The table holds every schedule once, in the enum's order, so a schedule indexes its entry.
static_assert([] {
    for (std::size_t i = 0; i < kSchedules.size(); ++i)
        if (kSchedules[i].kind != PipelineSchedule(i)) return false;
    return true;
}());

const ScheduleModel& scheduleModel(PipelineSchedule s) { return kSchedules[std::size_t(s)]; }

std::span<const ScheduleModel> scheduleModels() { return kSchedules; }

std::string scheduleNameList() {
    std::string out;
    for (std::size_t i = 0; i < kSchedules.size(); ++i)
        out += std::string(i == 0 ? "" : i + 1 == kSchedules.size() ? " or " : ", ") +
               std::string(kSchedules[i].name);
    return out;
}

} // namespace madmax
