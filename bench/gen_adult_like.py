#!/usr/bin/env python3
"""Synthetic Adult-like data for the scaling runs of docs/scale.md (issue 14): CSV shards with
Adult's kinds of columns (5 numeric, 6 categorical including sex and race) and a 0/1 income label
drawn from a logistic model whose intercept depends on sex and race, so that a demographic-parity
constraint binds (planted disparity: about 0.30 positive rate for men, 0.11 for women).

    /usr/bin/python3 bench/gen_adult_like.py --rows 1000000 --shards 4 --out /tmp/adult1m
    # writes /tmp/adult1m/part-00.csv ... part-03.csv (header in each), about 62 bytes a row

Rows are generated in chunks (memory stays about 200 MB whatever --rows) and are the same for a
given --seed and --rows whatever --shards: shard k holds rows [k n / s, (k + 1) n / s).
"""
import argparse
import os

import numpy as np

WORKCLASS = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
             "State-gov", "Without-pay"]
MARITAL = ["Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed"]
OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
              "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
              "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv"]
RACE = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
RACE_P = [0.85, 0.10, 0.03, 0.01, 0.01]
COUNTRY = [f"country-{i:02d}" for i in range(40)]
HEADER = ("age,workclass,education_num,marital_status,occupation,race,sex,capital_gain,"
          "hours_per_week,native_country,income\n")


def chunk(rng, n):
    """n rows as a list of CSV lines."""
    age = rng.integers(17, 90, size=n)
    edu = rng.integers(1, 17, size=n)
    hours = np.clip(rng.normal(40, 12, size=n).round(), 1, 99).astype(int)
    gain = np.where(rng.random(n) < 0.08, rng.integers(100, 99999, size=n), 0)
    work = rng.integers(0, len(WORKCLASS), size=n)
    marital = rng.integers(0, len(MARITAL), size=n)
    occ = rng.integers(0, len(OCCUPATION), size=n)
    race = rng.choice(len(RACE), size=n, p=RACE_P)
    female = rng.random(n) < 0.33
    country = np.minimum(rng.geometric(0.5, size=n) - 1, len(COUNTRY) - 1)
    z = (-3.2 + 0.03 * (age - 38) + 0.25 * (edu - 10) + 0.03 * (hours - 40)
         + 1.2 * (marital == 0) + 0.8 * np.isin(occ, [4, 5]) + 2.0 * (gain > 5000)
         - 1.1 * female - 0.4 * (race == 1))
    y = rng.random(n) < 1 / (1 + np.exp(-z))
    label = np.where(y, ">50K", "<=50K")
    cols = [age.astype(str), np.array(WORKCLASS)[work], edu.astype(str),
            np.array(MARITAL)[marital], np.array(OCCUPATION)[occ], np.array(RACE)[race],
            np.where(female, "Female", "Male"), gain.astype(str), hours.astype(str),
            np.array(COUNTRY)[country], label]
    return [",".join(row) + "\n" for row in zip(*cols)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--out", required=True, help="folder for part-NN.csv")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=200_000)
    a = ap.parse_args()
    if a.rows < a.shards or a.shards < 1:
        ap.error("need 1 <= --shards <= --rows")
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    bounds = [k * a.rows // a.shards for k in range(a.shards + 1)]
    shard, written = 0, 0
    out = open(os.path.join(a.out, "part-00.csv"), "w")
    out.write(HEADER)
    done = 0
    while done < a.rows:
        lines = chunk(rng, min(a.chunk, a.rows - done))
        done += len(lines)
        pos = 0
        while pos < len(lines):
            take = min(len(lines) - pos, bounds[shard + 1] - written)
            out.writelines(lines[pos:pos + take])
            pos += take
            written += take
            if written == bounds[shard + 1] and shard + 1 < a.shards:
                out.close()
                shard += 1
                out = open(os.path.join(a.out, f"part-{shard:02d}.csv"), "w")
                out.write(HEADER)
    out.close()
    print(f"{a.rows:,} rows in {a.shards} shard(s) under {a.out}")


if __name__ == "__main__":
    main()
