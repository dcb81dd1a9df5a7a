#!/usr/bin/env python3
"""Prints, per tactic of a partir-schedule{device=...} JSON report, the argument, result and
peak bytes per device, and whether the peak fell from the tactic before."""
import json
import sys

story = json.load(open(sys.argv[1]))
last = None
for tactic in story["tactics"]:
    memory = tactic["report"]["memory"]
    peak = int(memory["peak_bytes"])
    trend = "" if last is None else (" falls" if peak < last else " DOES NOT FALL")
    print(f"{tactic['tactic']}: arguments={int(memory['arguments_bytes'])} "
          f"results={int(memory['results_bytes'])} peak={peak}{trend}")
    last = peak
