"""Bucketing top-k weights into (bone, quantised weight) batches, and reading locked groups."""

import unittest
from array import array

import support  # noqa: F401
from blender_addon.weights import bucket_weight_values, bucket_weights, group_weight_rows, locked_weight_rows


def expand(buckets, steps, vertex_count, joint_count):
    """Dense per-vertex per-joint weights that ADD-mode writes of the buckets would produce."""
    dense = [[0.0] * joint_count for _ in range(vertex_count)]
    for joint, weight, vertices in bucket_weight_values(buckets, steps):
        for v in vertices:
            dense[v][joint] += weight
    return dense


class Buckets(unittest.TestCase):
    def test_exact_levels(self):
        indices = array("H", [0, 1, 0, 0, 1, 2, 0, 0, 2, 0, 0, 0])
        weights = array("f", [0.5, 0.5, 0, 0, 0.75, 0.25, 0, 0, 1.0, 0, 0, 0])
        buckets = bucket_weights(indices, weights, 4, steps=4)
        self.assertEqual(buckets, {0: {2: [0]}, 1: {2: [0], 3: [1]}, 2: {1: [1], 4: [2]}})
        dense = expand(buckets, 4, 3, 3)
        self.assertEqual(dense, [[0.5, 0.5, 0], [0, 0.75, 0.25], [0, 0, 1.0]])

    def test_quantisation_error_is_bounded(self):
        import random

        random.seed(7)
        count, k, steps = 500, 4, 4096
        indices, weights, exact = array("H"), array("f"), []
        for v in range(count):
            joints = random.sample(range(23), 4)
            raw = [random.random() for _ in range(3)] + [0.0]
            total = sum(raw)
            row = [x / total for x in raw]
            indices.extend(joints)
            weights.extend(row)
            dense = [0.0] * 23
            for j, w in zip(joints, array("f", row)):
                dense[j] += w
            exact.append(dense)
        got = expand(bucket_weights(indices, weights, k, steps), steps, count, 23)
        worst = max(abs(a - b) for ra, rb in zip(got, exact) for a, b in zip(ra, rb))
        self.assertLessEqual(worst, 0.5 / steps + 1e-7)

    def test_repeated_joint_sums(self):
        indices = array("H", [3, 3, 1, 0])
        weights = array("f", [0.25, 0.25, 0.5, 0.0])
        dense = expand(bucket_weights(indices, weights, 4, steps=4), 4, 1, 4)
        self.assertEqual(dense, [[0.0, 0.5, 0.0, 0.5]])

    def test_tiny_weights_vanish(self):
        buckets = bucket_weights(array("H", [0, 1]), array("f", [0.9999, 0.0001]), 2, steps=1024)
        self.assertEqual(buckets, {0: {1024: [0]}})

    def test_batches_are_few(self):
        count = 20000
        indices = array("H", [v % 5 for v in range(count)])
        weights = array("f", [1.0] * count)
        values = list(bucket_weight_values(bucket_weights(indices, weights, 1)))
        self.assertEqual(len(values), 5)
        self.assertEqual(sum(len(v) for _, _, v in values), count)


class Locked(unittest.TestCase):
    def test_rows(self):
        per_vertex = [[(0, 0.5), (2, 0.5)], [], [(2, 1.0)]]
        self.assertEqual(locked_weight_rows(per_vertex, [2, 5], 3), {2: [0.5, 0.0, 1.0], 5: [0.0, 0.0, 0.0]})


class SavedGroups(unittest.TestCase):
    def test_sparse_rows_keep_zero_weight_members(self):
        # what a rollback writes back: members with their exact weights, a 0-weight member included
        per_vertex = [[(0, 0.5), (2, 0.0)], [], [(2, 1.0), (1, 0.25)]]
        self.assertEqual(group_weight_rows(per_vertex, [2, 1, 7]),
                         {2: ([0, 2], [0.0, 1.0]), 1: ([2], [0.25]), 7: ([], [])})


if __name__ == "__main__":
    unittest.main()


class BothPaths(unittest.TestCase):
    def test_numpy_and_pure_python_give_the_same_buckets(self):
        import random

        from blender_addon import weights as w

        try:
            import numpy
        except ImportError:
            self.fail("numpy is needed to compare the two bucketing paths (Debian: python3-numpy)")
        random.seed(11)
        count, k, steps = 3000, 4, 1024
        indices, values = array("H"), array("f")
        for _ in range(count):
            joints = [random.randrange(23) for _ in range(k)]
            raw = [random.random() if random.random() > 0.3 else 0.0 for _ in range(k)]
            total = sum(raw) or 1.0
            indices.extend(joints)
            values.extend(x / total for x in raw)
        fast = w._bucket_weights_numpy(numpy, indices, values, k, steps)
        slow = w._bucket_weights_python(indices, values, k, steps)
        ordered = lambda b: {j: {lv: sorted(vs) for lv, vs in levels.items()} for j, levels in b.items()}
        self.assertEqual(ordered(fast), ordered(slow))
        self.assertGreater(len(fast), 10)
