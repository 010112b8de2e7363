"""Turning top-k skinning weights into bulk vertex-group writes (no bpy here).

Blender's `VertexGroup.add(indices, weight, 'REPLACE')` takes one weight for a whole list of vertices, and one call
per vertex is slow (about 1 s at 400k vertices). So the weights are quantised to WEIGHT_STEPS levels and the vertices
are bucketed by (bone, level): a few thousand `add` calls cover a 300k-vertex character. The quantisation error is at
most 1 / (2 * WEIGHT_STEPS) per weight, and Blender's Armature modifier normalises each vertex's weights anyway.
"""

from itertools import compress

__all__ = ["WEIGHT_STEPS", "bucket_weights", "bucket_weight_values", "locked_weight_rows", "group_weight_rows"]

WEIGHT_STEPS = 1024


def bucket_weights(indices, weights, influences, steps=WEIGHT_STEPS):
    """Group vertices by (joint, quantised weight).

    Uses numpy when it can be imported (every official Blender build bundles it: the grouping is then ~10x faster at
    300k vertices), else the pure-Python path; both give the same buckets.

    indices: sequence of int, #V*k (joint of each slot); weights: sequence of float, #V*k; influences: k.
    Returns {joint: {level: [vertex, ...]}} with level in 1..steps (weight = level / steps); zero weights are dropped.
    A joint that appears in two slots of one vertex appears in two buckets (or twice in one): write them with
    VertexGroup.add(..., 'ADD') on an empty group so that the slots sum.
    """
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        return _bucket_weights_numpy(numpy, indices, weights, influences, steps)
    return _bucket_weights_python(indices, weights, influences, steps)


def _bucket_weights_python(indices, weights, influences, steps):
    k = influences
    count = len(weights) // k
    stride = steps + 1
    by_key = {}
    for slot in range(k):
        slot_weights = weights[slot::k]
        # compress() drops zero weights at C speed: unused slots cost nothing below.
        live = list(compress(range(count), slot_weights))
        slot_joints = indices[slot::k]
        keys = [slot_joints[v] * stride + int(slot_weights[v] * steps + 0.5) for v in live]
        for vertex, key in zip(live, keys):
            bucket = by_key.get(key)
            if bucket is None:
                by_key[key] = [vertex]
            else:
                bucket.append(vertex)
    buckets = {}
    for key, vertices in by_key.items():
        joint, level = divmod(key, stride)
        if level == 0:
            continue
        buckets.setdefault(joint, {})[min(level, steps)] = vertices
    return buckets


def _bucket_weights_numpy(np, indices, weights, influences, steps):
    k = influences
    joints = np.asarray(indices, dtype=np.int64)
    values = np.asarray(weights, dtype=np.float32)
    count = len(values) // k
    live = values[: count * k] != 0
    vertices = np.repeat(np.arange(count, dtype=np.int64), k)[live]
    # Same rounding as the Python path: int(w * steps + 0.5) on the float32 weight promoted to double.
    levels = np.floor(values[live].astype(np.float64) * steps + 0.5).astype(np.int64)
    joints = joints[: count * k][live]
    keep = levels > 0
    vertices, levels, joints = vertices[keep], np.minimum(levels[keep], steps), joints[keep]
    keys = joints * (steps + 1) + levels
    order = np.lexsort((vertices, keys))
    keys, vertices = keys[order], vertices[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    ends = np.r_[starts[1:], len(keys)]
    buckets = {}
    for start, end in zip(starts.tolist(), ends.tolist()):
        joint, level = divmod(int(keys[start]), steps + 1)
        buckets.setdefault(joint, {})[level] = vertices[start:end].tolist()
    return buckets


def bucket_weight_values(buckets, steps=WEIGHT_STEPS):
    """Iterate (joint, weight, vertices) over bucket_weights' result, vertices sorted (Blender adds them in order)."""
    for joint in sorted(buckets):
        for level in sorted(buckets[joint]):
            yield joint, level / steps, buckets[joint][level]


def locked_weight_rows(vertex_groups_of_vertices, group_indices, vertex_count):
    """Dense weights of some vertex groups, read from per-vertex group lists in one pass.

    vertex_groups_of_vertices: iterable over vertices of iterables of (group index, weight);
    group_indices: the groups wanted. Returns {group index: list of float, #V}.
    """
    rows = {g: [0.0] * vertex_count for g in group_indices}
    for vertex, groups in enumerate(vertex_groups_of_vertices):
        for group, weight in groups:
            row = rows.get(group)
            if row is not None:
                row[vertex] = weight
    return rows


def group_weight_rows(vertex_groups_of_vertices, group_indices):
    """Sparse weights of some vertex groups, read from per-vertex group lists in one pass: what it takes to put the
    groups back exactly as they were (a vertex in a group with weight 0 stays a member).

    vertex_groups_of_vertices: iterable over vertices of iterables of (group index, weight);
    group_indices: the groups wanted. Returns {group index: (vertices: list of int, weights: list of float)}.
    """
    rows = {g: ([], []) for g in group_indices}
    for vertex, groups in enumerate(vertex_groups_of_vertices):
        for group, weight in groups:
            row = rows.get(group)
            if row is not None:
                row[0].append(vertex)
                row[1].append(weight)
    return rows
