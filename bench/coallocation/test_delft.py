#!/usr/bin/env python3
"""Checks of delft.py that need no testnet: the workload generator, the
thesis' job fitting and queueing, and the figures' definitions.

    python3 bench/coallocation/test_delft.py
"""
import os
import statistics
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import delft  # noqa: E402


def job(sizes, clusters=None, runtime=10.0, j=0, exp="E2"):
    comps = [{"nodes": n, "cluster": (clusters[i] if clusters else None)}
             for i, n in enumerate(sizes)]
    return {"experiment": exp, "job": j, "ordered": clusters is not None, "components": comps,
            "runtime_thesis": runtime, "runtime": runtime}


class Workload(unittest.TestCase):
    def test_forty_jobs_of_four_equal_components_as_section_6_2_says(self):
        for exp, size in (("E1", 8), ("E2", 8), ("E3", 4), ("E4", 8), ("E5", 8)):
            jobs = delft.workload(exp, 1, 1, 1.0)
            self.assertEqual(len(jobs), 40)
            for j in jobs:
                self.assertEqual([c["nodes"] for c in j["components"]], [size] * 4)

    def test_ordered_and_unordered_as_each_experiment_asks(self):
        self.assertFalse(any(j["ordered"] for e in ("E1", "E2", "E3")
                             for j in delft.workload(e, 1, 1, 1.0)))
        e4 = delft.workload("E4", 1, 1, 1.0)
        self.assertTrue(all(j["ordered"] for j in e4))
        # Two components on fs0 (144), two on fs3 (64): §6.3.
        self.assertEqual([c["cluster"] for c in e4[0]["components"]], ["fs0", "fs0", "fs3", "fs3"])
        for mix in ("alternate", "shuffle"):
            e5 = delft.workload("E5", 1, 1, 1.0, mix)
            self.assertEqual(sum(j["ordered"] for j in e5), 20)
        self.assertEqual([j["ordered"] for j in delft.workload("E5", 1, 1, 1.0)][:4],
                         [True, False, True, False])

    def test_deterministic_in_the_seed_and_the_same_runtimes_in_every_experiment(self):
        a = delft.workload("E1", 7, 4, 0.2)
        self.assertEqual(a, delft.workload("E1", 7, 4, 0.2))
        self.assertNotEqual([j["runtime"] for j in a],
                            [j["runtime"] for j in delft.workload("E1", 8, 4, 0.2)])
        self.assertEqual([j["runtime"] for j in a], [j["runtime"] for j in delft.workload("E4", 7, 4, 0.2)])

    def test_runtimes_follow_figure_6_6_and_scale(self):
        rts = [j["runtime_thesis"] for s in range(20) for j in delft.workload("E2", s, 1, 1.0)]
        self.assertAlmostEqual(statistics.fmean(rts), 92.4, delta=2.0)
        self.assertTrue(all(92.4 - 31.2 <= r <= 92.4 + 31.2 for r in rts))
        for j in delft.workload("E2", 1, 1, 0.2):
            self.assertAlmostEqual(j["runtime"], j["runtime_thesis"] * 0.2, places=2)

    def test_processor_scale_divides_every_count(self):
        self.assertEqual(delft.scaled_clusters("E1", 4), [("fs0", 36), ("fs1", 16), ("fs2", 16), ("fs3", 16)])
        self.assertEqual([c["nodes"] for c in delft.workload("E3", 1, 4, 1.0)[0]["components"]], [1] * 4)

    def test_submit_file_is_one_parallel_cluster_with_a_proc_per_component(self):
        e4 = delft.workload("E4", 1, 4, 0.2)[0]
        text = delft.submit_text(e4, "worst-fit", "/w/node.sh", "/w/stamps")
        self.assertIn("universe = parallel\n", text)
        self.assertIn("co_allocation = worst_fit\n", text)
        self.assertEqual(text.count("\nqueue\n"), 4)
        self.assertEqual(text.count("machine_count = 2\n"), 4)
        self.assertEqual(text.count("component_domain = d0.testnet\n"), 2)
        self.assertEqual(text.count("component_domain = d1.testnet\n"), 2)
        self.assertIn("$(Node)", text)
        e1 = delft.submit_text(delft.workload("E1", 1, 1, 0.2)[0], "best-fit", "n", "s")
        self.assertNotIn("component_domain", e1)
        self.assertIn("co_allocation = best_fit\n", e1)


class Fitting(unittest.TestCase):
    def test_modified_worst_fit_spreads_then_reuses_the_emptiest(self):
        # §4.3.3: one component per cluster while unmarked ones fit, the
        # emptiest first; then the marks are cleared.
        after = delft.fit(job([8, 8, 8, 8]), {"fs0": 144, "fs3": 64}, "worst-fit")
        self.assertEqual(after, {"fs0": 128, "fs3": 48})
        after = delft.fit(job([8, 8, 8, 8]), {"fs0": 144, "fs1": 64, "fs2": 64, "fs3": 64},
                          "worst-fit")
        self.assertEqual(after, {"fs0": 136, "fs1": 56, "fs2": 56, "fs3": 56})
        # A cluster too full for a component is skipped for the marked ones.
        after = delft.fit(job([8, 8, 8, 8]), {"fs0": 40, "fs3": 4}, "worst-fit")
        self.assertEqual(after, {"fs0": 8, "fs3": 4})
        self.assertIsNone(delft.fit(job([8, 8, 8, 8]), {"fs0": 31, "fs3": 4}, "worst-fit"))

    def test_largest_component_first(self):
        # 20 goes to the emptiest (30), then 15 to the next (25), then 10
        # to the last unmarked (12).
        after = delft.fit(job([10, 20, 15]), {"a": 30, "b": 25, "c": 12}, "worst-fit")
        self.assertEqual(after, {"a": 10, "b": 10, "c": 2})

    def test_modified_best_fit_takes_the_fullest_that_fits(self):
        after = delft.fit(job([8, 8]), {"fs0": 144, "fs1": 64, "fs3": 10}, "best-fit")
        self.assertEqual(after, {"fs0": 144, "fs1": 56, "fs3": 2})

    def test_ordered_fits_each_component_on_its_cluster_cumulatively(self):
        j = job([8, 8, 8, 8], ["fs0", "fs0", "fs3", "fs3"])
        self.assertEqual(delft.fit(j, {"fs0": 144, "fs3": 16}, "worst-fit"), {"fs0": 128, "fs3": 0})
        self.assertIsNone(delft.fit(j, {"fs0": 144, "fs3": 15}, "worst-fit"))


class Queueing(unittest.TestCase):
    def test_fpfs_lets_a_fitting_job_pass_fcfs_does_not(self):
        # The head (ordered on a small full cluster) cannot start while the
        # first job runs; an unordered one behind it fits on fs0.
        first = job([8, 8], ["fs3", "fs3"], runtime=100, j=0)
        blocked = job([8], ["fs3"], runtime=10, j=1)
        passer = job([8], None, runtime=10, j=2)
        clusters = [("fs0", 144), ("fs3", 16)]
        fcfs = delft.simulate([first, blocked, passer], clusters, "fcfs", "worst-fit")
        fpfs = delft.simulate([first, blocked, passer], clusters, "fpfs", "worst-fit")
        self.assertEqual(fcfs[2][0], 100.0)
        self.assertEqual(fpfs[2][0], 0.0)
        self.assertEqual(fpfs[1][0], 100.0)

    def test_processor_scale_changes_no_decision(self):
        # Dividing every count by 2 or 4 keeps every comparison: the same
        # schedule, so the same figures.
        for exp in delft.EXPERIMENTS:
            for rule in ("worst-fit", "best-fit"):
                base = delft.simulate(delft.workload(exp, 3, 1, 1.0), delft.scaled_clusters(exp, 1),
                                      delft.EXPERIMENTS[exp]["queueing"], rule)
                for sp in (2, 4):
                    got = delft.simulate(delft.workload(exp, 3, sp, 1.0),
                                         delft.scaled_clusters(exp, sp),
                                         delft.EXPERIMENTS[exp]["queueing"], rule)
                    self.assertEqual(got, base, (exp, rule, sp))

    def test_the_model_runs_as_many_jobs_at_once_as_the_clusters_hold(self):
        for exp, most in (("E1", 10), ("E2", 6), ("E3", 13), ("E4", 4)):
            done = delft.simulate(delft.workload(exp, 1, 1, 1.0), delft.scaled_clusters(exp, 1),
                                  delft.EXPERIMENTS[exp]["queueing"], "worst-fit")
            self.assertEqual(delft.max_concurrent(list(done.values())), most, exp)


class Figures(unittest.TestCase):
    class A:
        time_scale = 0.5
        scale_processors = 4
        rule = "worst-fit"

    def test_response_runtime_overhead_and_wait_add_up(self):
        j = job([2, 2, 2, 2], j=3, exp="E2")
        r = delft.job_row(j, self.A, "measured", submit=1.0, start=10.0, end=31.0,
                          node_start=10.5, node_end=29.5, coalloc=2.0, spread=0.1, placed="")
        self.assertEqual(r["response"], 30.0)
        self.assertEqual(r["runtime"], 19.0)
        # From the first claim (8.0) to the end (31.0), less the runtime.
        self.assertEqual(r["overhead"], 4.0)
        self.assertEqual(r["wait"], 7.0)

    def test_summary_puts_the_thesis_values_next_to_ours(self):
        a = self.A()
        rows = delft.model_rows("E5", delft.workload("E5", 1, 4, 0.5), a)
        (s,) = delft.summarise(rows)
        self.assertEqual((s["thesis_response_mean"], s["thesis_response_sd"]), (634.7, 335.3))
        self.assertEqual(s["thesis_overhead_mean"], 25.3)
        self.assertAlmostEqual(s["runtime_mean_thesis_time"], s["runtime_mean"] / 0.5, delta=0.1)

    def test_the_model_with_our_overhead_is_the_model_when_ours_is_nil(self):
        a = self.A()
        rows = delft.model_rows("E2", delft.workload("E2", 1, 4, 0.5), a)
        for r in rows:
            r["source"] = "measured"
        again = delft.with_our_overhead(rows)
        self.assertEqual([(r["start"], r["end"]) for r in again],
                         [(r["start"], r["end"]) for r in rows])


if __name__ == "__main__":
    unittest.main()
