// What every preset file shares, read the same way for models, GPUs and systems.
#pragma once

#include "madmax/json_reader.hpp"

namespace madmax::detail {

/// The descriptive fields every preset shares: id, name (defaults to the id), source, notes.
template <class T> void readIdentity(ObjectReader& r, T& out) {
    out.id = r.string("id", "");
    out.name = r.string("name", out.id);
    out.source = r.string("source", "");
    r.ignore("notes");
    r.ignore("schema");
}

} // namespace madmax::detail
