#!/usr/bin/env python3
"""Unit tests of the figures `partir calibrate` fits and `benches/predict` reports (planted
cases): the ring-model fit recovers a planted link, the line fit a planted line, the replica
groups are partir-export-stablehlo's, and Spearman's rank correlation is 1 for the same order,
-1 for the reverse, with ties averaged. Run: tools/.venv/bin/python tools/test_calibrate.py
(tests/calibrate.rs runs it)."""
from __future__ import annotations

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from partir_jax import calibrate  # noqa: E402
import predict  # noqa: E402


class Fits(unittest.TestCase):
    def test_a_planted_link_is_recovered(self):
        alpha, bandwidth = 30e-6, 2e9
        samples = []
        for kind in ["all_reduce", "all_gather", "reduce_scatter", "collective_permute"]:
            for group in [2, 4]:
                for size in [1e3, 1e5, 1e6]:
                    steps, traffic = calibrate.ring_terms(kind, group, size)
                    samples.append((kind, group, size, steps * alpha + traffic / bandwidth))
        fitted_alpha, fitted_bandwidth = calibrate.fit_link(samples)
        self.assertAlmostEqual(fitted_alpha / alpha, 1.0, places=6)
        self.assertAlmostEqual(fitted_bandwidth / bandwidth, 1.0, places=6)

    def test_the_ring_terms_are_the_simulators(self):
        # src/sim/cost.rs: all_gather (n-1) alpha + (n-1)/n S / B, all_reduce twice that,
        # collective_permute alpha + S / B.
        self.assertEqual(calibrate.ring_terms("all_gather", 4, 1000.0), (3.0, 750.0))
        self.assertEqual(calibrate.ring_terms("reduce_scatter", 4, 1000.0), (3.0, 750.0))
        self.assertEqual(calibrate.ring_terms("all_reduce", 4, 1000.0), (6.0, 1500.0))
        self.assertEqual(calibrate.ring_terms("collective_permute", 4, 1000.0), (1.0, 1000.0))

    def test_latency_alone_is_fitted_with_a_finite_bandwidth(self):
        # Every size costs the same (noise on a loaded machine): no per-byte term fits, alpha
        # is kept, and the bandwidth is the fastest sample's, 1.5e5 bytes of the 4-way
        # all_reduce of 1e5 in 300 us, not infinite (a device TOML cannot say `inf`).
        samples = [("all_reduce", 4, size, 6 * 50e-6) for size in [1e3, 1e4, 1e5]]
        alpha, bandwidth = calibrate.fit_link(samples)
        self.assertAlmostEqual(alpha, 50e-6)
        self.assertTrue(math.isfinite(bandwidth))
        self.assertAlmostEqual(bandwidth / 5e8, 1.0)

    def test_a_planted_line(self):
        intercept, slope = calibrate.line_fit([1, 2, 3, 4], [5.5, 7.5, 9.5, 11.5])
        self.assertAlmostEqual(intercept, 3.5)
        self.assertAlmostEqual(slope, 2.0)

    def test_replica_groups_are_the_exports(self):
        mesh = [("batch", 4), ("model", 2)]
        self.assertEqual(calibrate.groups(mesh, "batch"), [[0, 2, 4, 6], [1, 3, 5, 7]])
        self.assertEqual(calibrate.groups(mesh, "model"), [[0, 1], [2, 3], [4, 5], [6, 7]])

    def test_a_written_device_names_its_figures(self):
        figures = {"matrix_tflops": 0.02, "vector_tflops": 0.002, "memory_gib": 2.0, "memory_gbps": 3.0,
                   "op_overhead_us": 4.0, "launch_overhead_us": 200.0, "sources": ['how "quoted"'],
                   "links": {"batch": (30e-6, 2e9), "model": (20e-6, 4e9)}}
        text = calibrate.toml(figures, "box", 8, [("batch", 4), ("model", 2)], "a note")
        self.assertIn('name = "calibrated-box"', text)
        self.assertIn("[axis.batch]\nlink_gbps = 2.0\nlink_latency_us = 30.0", text)
        # The default link is the slowest measured.
        self.assertIn("link_latency_us = 30.0\n", text)
        self.assertIn('"how \\"quoted\\""', text)
        # Every figure is a TOML float, whole-valued ones too (`200.0`: the device loader and
        # `toml`'s floats reject the integer `200`).
        import tomllib
        device = tomllib.loads(text)
        for figure in ("matrix_tflops", "memory_gib", "launch_overhead_us", "link_gbps", "link_latency_us"):
            self.assertIsInstance(device[figure], float, figure)
        self.assertIsInstance(device["axis"]["batch"]["link_gbps"], float)


class Spearman(unittest.TestCase):
    def test_the_same_order_is_one_and_the_reverse_minus_one(self):
        self.assertAlmostEqual(predict.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1.0)
        self.assertAlmostEqual(predict.spearman([1, 2, 3, 4], [40, 30, 20, 10]), -1.0)

    def test_ties_share_their_average_rank(self):
        # scipy.stats.spearmanr([1, 2, 2, 3], [1, 3, 2, 4]) = 0.9486832980505138
        self.assertAlmostEqual(predict.spearman([1, 2, 2, 3], [1, 3, 2, 4]), 0.9486832980505138)

    def test_one_swap_of_four(self):
        # 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * 2 / 60 = 0.8
        self.assertAlmostEqual(predict.spearman([1, 2, 3, 4], [1, 2, 4, 3]), 0.8)

    def test_constant_or_short_is_nan(self):
        self.assertTrue(math.isnan(predict.spearman([1, 1, 1], [1, 2, 3])))
        self.assertTrue(math.isnan(predict.spearman([1], [1])))


class Repeatability(unittest.TestCase):
    def test_rounds_that_agree_are_one_and_a_swap_within_a_model_shows(self):
        rows = [{"model": "a", "rounds_s": [1.0, 1.1, 1.0]}, {"model": "a", "rounds_s": [2.0, 2.1, 2.0]},
                {"model": "b", "rounds_s": [5.0, 6.0, 5.0]}, {"model": "b", "rounds_s": [6.0, 5.0, 6.0]}]
        figures = predict.repeatability(rows)
        # Model a ranks alike in every round; model b swaps in round 2: rounds (0,1) and (1,2)
        # disagree, (0,2) agree: (-1 - 1 + 1) / 3.
        self.assertAlmostEqual(figures["rounds_within_model_mean"], (1.0 + (-1 - 1 + 1) / 3) / 2)
        self.assertEqual(predict.repeatability([{"model": "a", "rounds_s": [1.0]}]), {})


if __name__ == "__main__":
    unittest.main()
