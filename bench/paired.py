#!/usr/bin/env python3
"""Paired A/B timing of symc artifacts on a noisy machine.

Each round runs every artifact once (`symc-run --bench REPEAT`), the order
reversed every other round, and takes each artifact's ratio to the first
one's time in that round; the result is the median of those ratios over the
rounds, with their quartiles. A slow spell of a shared machine (its speed
moves by up to 1.5x within minutes) then moves both sides of a ratio, where
it would move times taken minutes apart. `--stat min` (the default) compares
each run's fastest forward, which such spells move least; `--stat median`
compares the runs' medians.

An artifact is `PATH` or `LIBDIR:PATH`, LIBDIR the libsymrt that runs it
(symc-run's RUNPATH is overridden through LD_LIBRARY_PATH), so that two
builds of the runtime can be compared on one artifact too:

    python3 bench/paired.py --symc-run build/bin/symc-run --rounds 10 --repeat 20 old.so new.so
    python3 bench/paired.py --symc-run build/bin/symc-run --backward --repeat 2 old-train.so new-train.so
"""
import argparse
import os
import re
import statistics
import subprocess


def time_once(options, spec):
    libdir, path = spec.split(":", 1) if ":" in spec else (None, spec)
    env = dict(os.environ, LD_LIBRARY_PATH=libdir) if libdir else None
    command = [options.symc_run, path, "--allow-missing", "--threads", str(options.threads),
               "--bench", str(options.repeat)] + (["--backward"] if options.backward else [])
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return float(re.search(options.stat + r" ([0-9.]+) ms", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc-run", dest="symc_run", required=True)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=20, help="forwards (or steps) per run")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--backward", action="store_true", help="time training steps (forward and backward)")
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("artifacts", nargs="+", help="the baseline first")
    options = parser.parse_args()
    base, others = options.artifacts[0], options.artifacts[1:]
    base_times, ratios = [], {spec: [] for spec in others}
    for round_index in range(options.rounds):
        order = options.artifacts if round_index % 2 == 0 else options.artifacts[::-1]
        times = {spec: time_once(options, spec) for spec in order}
        base_times.append(times[base])
        for spec in others:
            ratios[spec].append(times[spec] / times[base])
    print("%s: %s %.3f ms (median over rounds), %.3f ms fastest" % (base, options.stat, statistics.median(base_times),
                                                                    min(base_times)))
    for spec, values in ratios.items():
        quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
        print("%s / base: %.3f (q1 %.3f, q3 %.3f; %d rounds)" % (spec, statistics.median(values), quartiles[0],
                                                                 quartiles[2], len(values)))


if __name__ == "__main__":
    main()
