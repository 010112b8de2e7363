"""Bulk vertex-group write at 300k vertices: one VertexGroup.add per (vertex, slot) vs the add-on's bucketed write.

  blender -b --factory-startup --python test/blender/bench_weights.py -- [vertices]
Prints `AUTORIG_BENCH {json}`. Weights are smooth like real skinning: top-4 of inverse distances to 23 points.
"""

import json
import math
import os
import sys
import time
from array import array

import bpy

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
from blender_addon.apply import write_weights  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
target = int(argv[0]) if argv else 300000
side = int(math.sqrt(target))
bpy.ops.mesh.primitive_grid_add(x_subdivisions=side, y_subdivisions=side, size=2.0)
obj = bpy.context.active_object
count = len(obj.data.vertices)
co = array("f", bytes(count * 12))
obj.data.vertices.foreach_get("co", co)

joints = [(math.cos(j * 2.4) * 0.8, math.sin(j * 2.4) * 0.8) for j in range(23)]
k = 4
indices, weights = array("H"), array("f")
for v in range(count):
    x, y = co[3 * v], co[3 * v + 1]
    near = sorted((((x - jx) ** 2 + (y - jy) ** 2), j) for j, (jx, jy) in enumerate(joints))[:k]
    inv = [1.0 / (d + 1e-3) ** 2 for d, _ in near]
    total = sum(inv)
    for (d, j), w in zip(near, inv):
        indices.append(j)
        weights.append(w / total if w / total > 0.01 else 0.0)


def fresh_groups():
    obj.vertex_groups.clear()
    return [obj.vertex_groups.new(name="J%02d" % j) for j in range(23)]


groups = fresh_groups()
start = time.perf_counter()
for v in range(count):
    for s in range(k):
        w = weights[v * k + s]
        if w > 0.0:
            groups[indices[v * k + s]].add([v], w, 'REPLACE')
per_vertex = time.perf_counter() - start
reference = [[g.weight for g in vert.groups] for vert in obj.data.vertices[:1000]]

groups = fresh_groups()
start = time.perf_counter()
calls = write_weights(obj, groups, indices, weights, k)
bucketed = time.perf_counter() - start
check = [[g.weight for g in vert.groups] for vert in obj.data.vertices[:1000]]
worst = max(abs(a - b) for ra, rb in zip(reference, check) for a, b in zip(sorted(ra), sorted(rb)))
print("AUTORIG_BENCH " + json.dumps({"vertices": count, "entries": sum(1 for w in weights if w > 0),
                                     "per_vertex_seconds": per_vertex, "bucketed_seconds": bucketed,
                                     "add_calls": calls, "max_weight_difference": worst}), flush=True)
